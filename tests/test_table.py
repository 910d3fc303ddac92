"""The results-table reader: the lecture table, repetitions, and clear errors for anything malformed."""

import pytest

from probes.readers import table
from probes.core.errors import ToolOutputError
from probes.readers import read_results
from probes.core.units import Metric
from probes.core.workload import Access, Operation
from topologies.bundled import example_path

HEADER = "op,transfer_size,value,unit\n"


def test_the_lecture_table_has_every_published_cell():
    runs = read_results(example_path("lecture-results.csv"))
    assert len(runs) == 26
    first = runs[0]
    assert first.label == "Lustre fixed size write 1 MiB seq, 10 nodes x 1 ppn"
    assert (first.workload.operation, first.workload.transfer_size.m_as("KiB"), first.workload.ppn) == (Operation.WRITE, 1024, 1)
    assert first.value.m_as("MiB/s") == 640 and first.summary.n == 1 and first.summary.std is None
    assert dict(first.tags) == {"system": "Lustre", "table": "fixed size"}
    cache_read = next(r for r in runs if r.value.m_as("MiB/s") == 1800)
    assert cache_read.workload.ppn == 4 and cache_read.workload.transfer_size.m_as("KiB") == 256
    assert cache_read.origin.line == 29 and cache_read.origin.tool == "table"


def test_rows_of_one_run_are_its_repetitions():
    text = "run,op,transfer_size,ppn,access,direct,value,unit\n" + "".join(
        f"r1,read,4 KiB,2,random,yes,{v},op/s\n" for v in (100, 110, 105))
    (run,) = table.parse(text, source="r.csv")
    assert run.samples == (100, 110, 105) and run.metric is Metric.OPERATION_RATE
    assert run.workload.access is Access.RANDOM and run.workload.direct is True
    assert run.summary.mean == pytest.approx(105) and run.summary.ci_low < 105 < run.summary.ci_high


def test_metadata_rows_say_whether_processes_share_one_directory():
    text = "op,transfer_size,nodes,ppn,shared_directory,value,unit\ncreate,,4,8,true,30000,op/s\nstat,,4,8,,90000,op/s\n"
    create, stat = table.parse(text, source="m.csv")
    assert (create.workload.shared_directory, stat.workload.shared_directory) == (True, None)
    with pytest.raises(ToolOutputError, match="column 'shared_directory': must be true or false"):
        table.parse(text.replace("true", "maybe"), source="m.csv")


def test_a_run_given_two_workloads_is_refused():
    text = "run,op,transfer_size,value,unit\nr1,read,1 MiB,1,MiB/s\nr1,write,1 MiB,2,MiB/s\n"
    with pytest.raises(ToolOutputError, match="r.csv: line 3: run 'r1' was given another workload or unit on line 2"):
        table.parse(text, source="r.csv")


@pytest.mark.parametrize("body, where, message", [
    ("read,1 MiB,100\n", "line 2", "has 3 cells; the header has 4"),
    ("read,1 MiB,-5,MiB/s\n", "line 2, column 'value'", "a finite, non-negative number"),
    ("read,1 MiB,nan,MiB/s\n", "line 2, column 'value'", "a finite, non-negative number"),
    ('read,1 MiB,"1,05",GiB/s\n', "line 2, column 'value'", "its decimals after a point"),  # a decimal comma: not 105
    ('read,1 MiB,"1.000,5",GiB/s\n', "line 2, column 'value'", "its decimals after a point"),
    ("frob,1 MiB,5,MiB/s\n", "line 2, column 'op'", "one of write, read, read+write, create"),
    ("stat,,5,MiB/s\n", "line 2, column 'op'", "A metadata operation (stat) is counted in op/s"),
    ("read,big,5,MiB/s\n", "line 2, column 'transfer_size'", "must be a number with a unit, such as '1 MiB'"),
    ("read,1 MiB,5,KB/s\n", "line 2, column 'unit'", "ambiguous"),
    ("read,1 MiB,5,ms\n", "line 2, column 'unit'", "bandwidth (e.g. MiB/s) or an operation rate"),
])
def test_malformed_rows_name_line_and_column(body, where, message):
    with pytest.raises(ToolOutputError) as err:
        table.parse("# a comment line first\n" + HEADER.replace("\n", "") + "\n" + body, source="r.csv")
    assert err.value.where == where.replace("line 2", "line 3") and message in str(err.value)


def test_header_problems():
    with pytest.raises(ToolOutputError, match="^r.csv: line 1: a results CSV needs transfer_size and unit; it has op, value$"):
        table.parse("op,value\nread,5\n", source="r.csv")
    with pytest.raises(ToolOutputError, match="has a header but no rows"):
        table.parse(HEADER, source="r.csv")
    with pytest.raises(ToolOutputError, match="no header and no rows"):
        table.parse("# only a comment\n", source="r.csv")


def test_truncated_lecture_table_is_an_error_not_a_crash():
    text = example_path("lecture-results.csv").read_text()
    for cut in range(0, len(text), 97):
        try:
            table.parse(text[:cut], source="cut.csv")
        except ToolOutputError as err:
            assert str(err).startswith("cut.csv")


def test_unknown_formats_are_refused(tmp_path):
    other = tmp_path / "notes.txt"
    other.write_text("hello\n")
    with pytest.raises(ToolOutputError, match="not a format iobound reads; expected a results CSV with columns op, .* or fio JSON output"):
        read_results(other)


def test_a_results_csv_with_the_wrong_columns_says_which_it_lacks(tmp_path):
    """Not the list of every format iobound reads: the file is a results CSV, and two columns are missing."""
    path = tmp_path / "wrong.csv"
    path.write_text("op,size,value\nread,1 MiB,100\n")
    with pytest.raises(ToolOutputError) as err:
        read_results(path)
    assert str(err.value) == f"{path}: line 1: a results CSV needs transfer_size and unit; it has op, size, value"
    other = tmp_path / "other.csv"
    other.write_text("name,size,value\nx,1,2\n")  # one required column is no results CSV: the columns are named
    with pytest.raises(ToolOutputError) as err:
        read_results(other)
    assert str(err.value).startswith(f"{other}: line 1: a CSV with the columns name, size, value, not a results table: "
                                     "expected the columns op, transfer_size, value, unit (and optionally run, nodes")


def test_a_placement_goes_out_and_back_as_the_processes_column():
    """io500's procs, with no node count: the CSV that read writes gives the same placement back."""
    from probes.core.run import results_csv

    runs = table.parse(example_path("lrz-daos-io500.csv").read_text(encoding="utf-8"), source="lrz.csv")
    assert {r.placement.processes for r in runs} == {21504} and "processes" not in dict(runs[0].tags)
    back = table.parse(results_csv(runs), source="back.csv")
    assert [(r.label, r.placement) for r in back] == [(r.label, r.placement) for r in runs]


@pytest.mark.parametrize("cell, value", [("1,050", 1050.0), ("12,345.5", 12345.5), ("1,234,567", 1234567.0), ("1050", 1050.0)])
def test_a_comma_between_groups_of_three_digits_is_read_as_thousands(cell, value):
    (run,) = table.parse(HEADER + f'read,1 MiB,"{cell}",MiB/s\n', source="r.csv")
    assert run.summary.mean == value
