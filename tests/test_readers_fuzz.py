"""Every reader of probes.readers on garbage: runs that make sense, or one error naming the file (a
ToolOutputError; an InputError for a description), never another exception, whatever the text (or, for a binary
format, the bytes).

The garbage is random text, and random text around the lines each tool prints, so that it gets past each
reader's sniff into its parser. tests/garbage.py says what each reader's runs and refusals must hold.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from typing import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import probes.readers
from probes.core.errors import InputError
from tests.garbage import REFUSALS, RUNS, SOURCE, read_or_refuse

TEXT_READERS, BINARY_READERS = probes.readers.READERS, probes.readers.BINARY_READERS


def _descriptions() -> dict[str, Callable[..., object]]:
    """The readers of what is not a run (a system's description, the io500 list's submissions), by module.name:
    each read_* of a ``*_system`` module in probes.readers (a reader's own parts take lines, not a file's text)."""
    found = {}
    for info in pkgutil.iter_modules(probes.readers.__path__):
        if info.name.endswith("_system"):
            module = importlib.import_module(f"{probes.readers.__name__}.{info.name}")
            found |= {f"{info.name}.{name}": read for name, read in inspect.getmembers(module, inspect.isfunction)
                      if name.startswith("read_") and read.__module__ == module.__name__}
    return found


DESCRIPTIONS = _descriptions()

# Lines (or pieces of lines) each tool prints, for the garbage to be built around.
_FIO_TEXT_JOB = "job: (g=0): rw=read, bs=(R) 4096B-4096B, (W) 4096B-4096B, (T) 4096B-4096B, ioengine=libaio, iodepth=1"
_NETWORK = ["Connecting to host h, port 5201\n", "Client connecting to h, TCP port 5001\n",
            "PING h (10.0.0.1) 56(84) bytes of data.\n", "Pinging h with 32 bytes of data:\n",
            '{"start": {}, "test_start": 1, "intervals": [', "[  5] local a port 1 connected to b port 2\n",
            "[  3] local a port 1 connected with b port 2\n", "", "\n", "[SUM]", "[  5]", " sec ", "Bytes",
            " Mbits/sec", "(omitted)", "sender", "receiver", "time<1ms", "time=1ms", " ms", "{", "}", ",", "nan",
            "- - -", "[ ID] Interval  Transfer  Bitrate\n", "(DUP!)"]
PIECES = {
    "fio": ["{", '"fio version": "fio-3.36", ', '"jobs": [', '{"jobname": "j", "error": 0, ', '"job options": {',
            '"read": {"io_bytes": 1, "bw_bytes": 1}', "}", "]", ",", "fio: pid=1, err=5"],
    "fio-text": [_FIO_TEXT_JOB, _FIO_TEXT_JOB.replace("rw=read", "rw=randrw").replace("iodepth=1", "iodepth=8"),
                 "...", "fio-3.36", "job: (groupid=0, jobs=1): err= 0: pid=42: Mon Jan  1 00:00:00 2024\n"
                 "  read: IOPS=256, BW=1024KiB/s (1049kB/s)(10.0MiB/10000msec)",
                 "job: (groupid=0, jobs=3): err= 0: pid=42: Mon Jan  1 00:00:00 2024\n"
                 "  read: IOPS=256, BW=1024KiB/s (1049kB/s)(10.0MiB/10000msec)",
                 "  write: IOPS=1, BW=1GiB/s (1074MB/s)(1GiB/1000msec)", "  read: IOPS=1k, BW=",
                 "Run status group 0 (all jobs):", "Disk stats (read/write):",
                 "All clients: (groupid=0, jobs=2): err= 0: pid=0:", "error: x", "[global]", "",
                 "hostname=a, be=0, 64-bit, os=Linux, arch=x86-64, fio=fio-3.33, flags=1", "<a> " + _FIO_TEXT_JOB],
    "ior": ["IOR-3.3.0: MPI Coordinated Test of Parallel I/O", "Summary of all tests:", "write", "-nan", "\t= x"],
    "mdtest": ["mdtest-1.9.3 was launched with 4 total task(s) on 1 node(s)", "SUMMARY: (of 0 iterations)",
               "   Tree removal", " 0.000", "-nan"],
    "io500": ["[RESULT]", "IO500 version x", "version = io500-x", "[ior-easy-write]", "score = 1", "[global]",
              "1/ior-easy-write BW:", "[RESULT] BW phase 1 ior_easy_write 1 GB/s : time 1 seconds", 'io500_info_x="y"',
              "[Starting] ior_easy_write", "[Exec] ior -t", "exe = ./ior -t"],
    "elbencho": ["threads : 4\n", "threads : 0\n", "OPERATION RESULT TYPE FIRST DONE LAST DONE\n", "---\n",
                 "WRITE Elapsed ms : 1 2\n", "  IOPS : 3 4\n", "  Files/s : 5\n", "READ Elapsed time : 1m 2.5s\n",
                 "  Throughput MiB/s : 1 -1\n", 'COMMAND LINE: "e" "-t" "0" "--hosts" "a[9-1],²[1-²]"\n',
                 "Working on /x/3x0KiB with 0 threads...\n", "  Total MiB : 0 0\n", "block_size : 99999999999999e\n"],
    "hyperfine": ['{"results": [', '{"command": "x", ', '"mean": 1.0, ', '"stddev": null, ', '"times": [1.0, -1]',
                  '"exit_codes": [0, 1]', "}", "]", ","],
    "iperf3": _NETWORK, "iperf2": _NETWORK, "ping": _NETWORK,
    "mlperf": ['{"num_accelerators": 8, ', '"metric": {', '"num_files_train": 3200, ', '"train_au_percentage": [',
               '"host_memory_GB": [', "}", "]", ","],
    "dlio-log": ["[OUTPUT] 2025-03-19T09:21:48.328425 Running DLIO [Checkpointing] with 2 process(es)\n",
                 "[OUTPUT] 2025-03-19T09:23:25.328675 Finished saving checkpoint 1 for epoch 1 in 77.1101 s; "
                 "Throughput: 1.1394 GB/s\n", "[OUTPUT] x Finished loading checkpoint 2 for epoch 1 in 0 s; Throughput: ",
                 "[OUTPUT] x Total checkpoint size: 87.86 GB\n", "with 0 process(es)", "\n"],
    "kv-cache": ['{"summary": {', '"elapsed_time": 10.0, ', '"cache_stats": {', '"tier_storage_read_bandwidth_gbps": 0.3',
                 '"tier_cpu_write_bandwidth_gbps": -1', '"tier_gpu_read_bandwidth_gbps": 0', "}", ","],
    "lmcache": ["LMCache INFO: Stored 2048 out of total 2048 tokens. size: 0.2188 gb, cost 14.7797 ms, throughput: "
                "14.8007 GB/s; offload_time: 14.7275 ms\n", "LMCache INFO: Retrieved 10 out of 10 required tokens (from "
                "10 total tokens). size: 0.0000 gb, cost 0.5 ms, throughput: 0.0 GB/s;\n",
                "LMCache INFO: Store 1792 tokens takes: 2.2906 ms, throughput: 1e9 GB/s; ", " GB/s", "\n"],
    "table": ["op,transfer_size,value,unit\n", "write,1 MiB,100,MiB/s\n", "read,,x,\n"],
    "gdsio": ["gdsio -D /d -d 1 -w 8 -s 1G -i 1M -x 0 -I 0\n", "./gdsio -f f -d 0 -x 2 -I 1M -I 9\n", "gdsio -Z -w\n",
              "IoType: READ XferType: GPUD Threads: 8 DataSetSize: 1/2(KiB) IOSize: 1024(KiB) ",
              "IoType: RANDWRITE XferType: BOGUS Threads: 0 DataSetSize: 1/2(KiB) IOSize: 0(KiB) ",
              "Throughput: 6.885191 GiB/sec, Avg_Latency: 27231.054742 usecs", " ops: 1 total_time 0.5 secs", "\n"],
    "io500_system.read_info": ['io500_info_ds_nodes="1"', "export io500_info_system=x"],
    "io500_system.read_description": ['{"DATA": {"type": "Site", ', 'io500_info_ds_nodes="1"'],
    "io500_system.read_form": ['{"DATA": {"type": "Site", ', '"children": [', "}", "]"],
    "io500_system.read_list": ["information_system,information_client_nodes,ior_easy_write\n", "a,1,2\n", '"'],
    "mlperf_system.read_mlperf_description": ['{"system_under_test": {', '"benchmark_hosts": [', '"quantity": 1, ',
                                              "storage_system:\n", "  - quantity: 4\n", "}", "]", ",", ": ", "- "],
}


def test_every_reader_here_is_one_the_registry_holds_and_every_reader_has_its_pieces():
    assert set(RUNS) | set(REFUSALS) <= set(TEXT_READERS) | set(BINARY_READERS)
    assert set(PIECES) == set(TEXT_READERS) | set(DESCRIPTIONS)


def garbage(pieces: list[str]) -> st.SearchStrategy[str]:
    """Any text, or pieces of a tool's output and random text in any order after one of them (its head, as a
    header or a first line), on one line or on lines of their own."""
    parts = st.lists(st.sampled_from(pieces) | st.text(max_size=12), max_size=25)
    return st.text() | st.builds(lambda head, between, parts: between.join([head, *parts]),
                                 st.sampled_from(["", *pieces]), st.sampled_from(["", "\n"]), parts)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(TEXT_READERS))
@settings(max_examples=150, deadline=None)
@given(data=st.data())
def test_any_text_is_read_or_refused_by_every_reader(name, data):
    reader = TEXT_READERS[name]
    text = data.draw(garbage(PIECES[name]))
    assert isinstance(reader.looks_like(text), bool)
    read_or_refuse(name, text)


@settings(max_examples=150, deadline=None)
@given(garbage(sorted({piece for pieces in PIECES.values() for piece in pieces})))
def test_any_text_is_read_by_the_reader_that_knows_it_or_refused(text):
    read_or_refuse("", text, read=probes.readers.read_text)


@pytest.mark.parametrize("name", sorted(BINARY_READERS))
@settings(max_examples=150, deadline=None)
@given(data=st.binary())
def test_any_bytes_are_read_or_refused_by_every_binary_reader(name, data):
    reader = BINARY_READERS[name]
    assert isinstance(reader.looks_like(data), bool)
    read_or_refuse(name, data)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(DESCRIPTIONS))
@settings(max_examples=150, deadline=None)
@given(data=st.data())
def test_any_text_is_a_description_or_refused(name, data):
    try:
        DESCRIPTIONS[name](data.draw(garbage(PIECES[name])), source=SOURCE)
    except InputError as exc:  # a description that is not a tool's output is an InputError, as a topology is
        assert str(exc).startswith(f"{SOURCE}: ")
