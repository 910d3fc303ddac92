"""Units: one registry, strict parsing, refused ambiguity, and the pint trap that bytes are dimensionless."""

import operator
import os
import subprocess
import sys

import pytest
from hypothesis import example, given, strategies as st

from probes.core.errors import UnitError
from probes.core.units import Metric, Q_, format_quantity, parse_quantity, parse_unit, require


def test_iops_are_not_bandwidth():
    assert not Q_(1, "op/s").is_compatible_with("B/s")
    with pytest.raises(UnitError, match="must be a bandwidth"):
        require(Q_(15000, "op/s"), Metric.BANDWIDTH, what="nic")


def test_known_hazard_bytes_are_dimensionless_in_pint():
    # hgrecco/pint#593: if this ever fails, the Metric checks can be simplified.
    assert Q_(1, "B/s").is_compatible_with("Hz")
    # ... which is why a bandwidth must be stated in bits or bytes:
    with pytest.raises(UnitError, match="must be a bandwidth"):
        require(Q_(1, "Hz"), Metric.BANDWIDTH, what="nic")


@pytest.mark.parametrize("text, mib_per_s", [
    ("110 MiB/s", 110), ("1 Gbit/s", 1e9 / 8 / 2**20), ("10 GbE", 10e9 / 8 / 2**20), ("1,100 MiB/s", 1100),
    ("1 Gbps", 1e9 / 8 / 2**20), ("1000 MB/s", 1e9 / 2**20), ("4 GiB/s", 4096), ("9.8 GiB/s", 9.8 * 1024),
])
def test_bandwidths_parse_to_the_right_value(text, mib_per_s):
    assert parse_quantity(text, Metric.BANDWIDTH, what="x").m_as("MiB/s") == pytest.approx(mib_per_s)


def test_mb_and_mib_differ_and_so_do_mb_and_mbit():
    mb, mib, mbit = (parse_quantity(t, what="x").m_as("B/s") for t in ("1 MB/s", "1 MiB/s", "1 Mbit/s"))
    assert mib / mb == pytest.approx(1.048576)
    assert mb / mbit == pytest.approx(8)


@pytest.mark.parametrize("text, metric, canonical", [
    ("15000 IOPS", Metric.OPERATION_RATE, 15000), ("60 kIOPS", Metric.OPERATION_RATE, 60000),
    ("0.1 ms", Metric.LATENCY, 1e-4), ("100 µs", Metric.LATENCY, 1e-4), ("64 KiB", Metric.SIZE, 65536),
])
def test_other_metrics(text, metric, canonical):
    assert parse_quantity(text, metric, what="x").m_as(metric.unit) == pytest.approx(canonical)


@pytest.mark.parametrize("unit", ["Mb/s", "Gb/s", "kb/s", "KB", "mb/s"])
def test_ambiguous_units_are_refused_with_both_readings(unit):
    with pytest.raises(UnitError, match="ambiguous") as err:
        parse_unit(unit, what="the value on line 3")
    assert "line 3" in str(err.value) and "could mean" in str(err.value)


def test_the_user_says_what_an_ambiguous_unit_means():
    assert parse_quantity("3400 Mb/s", what="x", aliases={"Mb/s": "MB/s"}).m_as("MB/s") == 3400
    assert parse_quantity("3400 Mb/s", what="x", aliases={"Mb/s": "Mbit/s"}).m_as("MB/s") == 425


@pytest.mark.parametrize("text, message", [
    ("110", "must have a unit"), (110, "must have a unit"), ("fast", "must be a number with a unit"),
    ("-3 MiB/s", "positive"), ("5 blorps", "not one iobound knows"), ("3 ms", "must be a bandwidth"),
    ("1,5 MiB/s", "must be a number with a unit"), (None, "must be a number with a unit"),
])
def test_bad_values_say_what_is_wrong(text, message):
    with pytest.raises(UnitError, match=message):
        parse_quantity(text, Metric.BANDWIDTH, what="nic")


@given(st.text(max_size=30))
def test_parsing_arbitrary_text_raises_only_unit_errors(text):
    try:
        parse_quantity(text, Metric.BANDWIDTH, what="x")
    except UnitError:
        pass


@given(st.floats(min_value=1e-3, max_value=1e12), st.sampled_from(["MiB/s", "GB/s", "Gbit/s", "KiB/s", "TiB/s"]))
def test_formatting_keeps_the_value(value, unit):
    shown = format_quantity(Q_(value, unit))
    assert parse_quantity(shown, Metric.BANDWIDTH, what="x").m_as("B/s") == pytest.approx(Q_(value, unit).m_as("B/s"), rel=0.01)


def test_formatting_for_people():
    assert format_quantity(Q_(1100, "MiB/s")) == "1,100 MiB/s"
    assert format_quantity(Q_(15000, "op/s")) == "15,000 op/s"
    assert format_quantity(Q_(1, "MiB")) == "1 MiB"
    assert format_quantity(Q_(0.1, "ms")) == "100 µs"


def test_the_registry_works_where_pints_cache_cannot_be_written(tmp_path):
    """pint caches its parsed definitions in the user's cache folder; one that cannot be written only costs time."""
    env = dict(os.environ, XDG_CACHE_HOME="/proc/no-cache-here", HOME="/proc/no-home-here")
    done = subprocess.run([sys.executable, "-c", "from probes.core.units import Q_; print(Q_(1, 'GiB/s').to('MiB/s'))"],
                          capture_output=True, text=True, env=env, cwd=tmp_path, check=True)
    assert done.stdout.strip() == "1024.0 mebibyte / second"


def test_a_cache_file_cut_short_costs_time_not_the_command(tmp_path):
    """Two first starts beside each other (MPI ranks on one home) can leave pint's cache half written."""
    env = dict(os.environ, XDG_CACHE_HOME=str(tmp_path))
    code = "from probes.core.units import Q_; print(Q_(8, 'Gbit/s').to('GB/s'))"
    subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    cached = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert cached
    for path in cached:
        path.write_bytes(path.read_bytes()[:7])
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    assert done.stdout.strip() == "1.0 gigabyte / second"


def test_pint_loads_with_the_first_quantity_not_with_the_module():
    code = ("import sys; import probes.core.units as u; before = 'pint' in sys.modules; u.Q_(1, 'B'); "
            "print(before, 'pint' in sys.modules, u.ureg is u.registry())")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["False", "True", "True"]


LEAN = "import probes.core.registry; probes.core.registry.lean(); "  # as the command line starts


def test_a_librarys_user_gets_pint_whole_and_an_array_of_quantities_keeps_its_unit():
    """A notebook that quantifies before it imports numpy: pint has numpy, so a quantity of an array keeps its unit
    through numpy's functions and methods (a lean pint's ``.mean()`` gives a bare number), as the command line need not."""
    code = ("import sys, probes.core.units as u; q = u.Q_(3, 'MiB/s'); import numpy as np, pint.compat; "
            "a = u.Q_(np.array([1.0, 2.0]), 'MiB/s'); "
            "print(pint.compat.HAS_NUMPY, a.mean() == u.Q_(1.5, 'MiB/s'), np.sqrt(q * q) == q, np.max(a).m_as('KiB/s'))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["True", "True", "True", "2048.0"]


@pytest.mark.parametrize("library, module", [("dask", "dask.base"), ("scipy", "scipy.optimize")])
def test_pint_loads_without_dask_or_scipy_which_still_import_after_it(library, module):
    """pint imports dask.base where dask is installed (half a second of every command's start) and scipy for an optimiser
    iobound never calls; on a command line the registry hides them, and a command that needs one imports it as ever."""
    pytest.importorskip(library, reason=f"{library} is not installed: pint cannot import it anyway")
    code = (f"import sys; {LEAN}import probes.core.units as u; u.Q_(1, 'MiB/s').m_as('B/s'); print({library!r} in sys.modules); "
            f"import {module}; print({module}.__name__)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["False", module]


def test_pint_loads_without_importlib_metadata_and_states_the_versions_it_would_give():
    """pint, flexcache and flexparser ask importlib.metadata for their versions as they load (email and zipfile: 3 %
    of a check's start); the registry answers from their dist-info folders, the very versions (pint's disk cache
    keys on its own), and importlib.metadata imports whole afterwards, a name it cannot find refused as ever."""
    loaded = (f"import sys; {LEAN}import probes.core.units as u; u.Q_(1, 'MiB/s').m_as('B/s'); "
              "print('importlib.metadata' in sys.modules); import pint, flexcache, flexparser, importlib.metadata as m; "
              "print(all(lib.__version__ == m.version(lib.__name__) != 'unknown' for lib in (pint, flexcache, flexparser)))")
    unfound = ("import sys, probes.core.registry as r; sys.modules['importlib.metadata'] = r._METADATA\n"
               "try: r._version('no-such-library')\n"
               "except Exception as e: print(type(e) is sys.modules['importlib.metadata'].PackageNotFoundError)")
    done = [subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
            for code in (loaded, unfound)]
    assert done == [["False", "True"], ["True"]]


@pytest.mark.parametrize("first", ["", "import numpy; "], ids=["numpy later", "numpy first"])
def test_pint_loads_without_numpy_and_numpys_numbers_meet_a_quantity_alike_either_way(first):
    """numpy is 0.2 s of every command's start and pint needs it for arrays alone (iobound's quantities hold Python
    numbers): a command line's pint gets it where it was loaded first (a report), and numpy's numbers work on either
    side alike."""
    code = (f"import sys; {LEAN}{first}import probes.core.units as u; q = u.Q_(3, 'MiB/s'); print('numpy' in sys.modules); "
            "import numpy as np, pint.compat; six = u.Q_(6, 'MiB/s'); "
            "print(pint.compat.HAS_NUMPY, np.float64(2) * q == six, q * np.int64(2) == six, u.Q_(np.float64(4), 'MiB/s') > q, "
            "(np.array([1.0, 2.0]) * q).m_as('KiB/s').tolist(), u.format_quantity(u.Q_(np.float64(2.5), 'GB/s')))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    loaded = str(bool(first))
    assert done.stdout.split("\n")[:2] == [loaded, f"{loaded} True True True [3072.0, 6144.0] 2,384 MiB/s"]


def test_threads_that_quantify_at_once_share_the_one_registry_and_import_numpy_meanwhile():
    """A dask worker's threads: each asks for the registry, another imports numpy, none is refused or given another."""
    code = ("import sys, threading; import probes.core.registry as r; r.lean(); found = []; "
            "threads = [threading.Thread(target=lambda: found.append(r.registry())) for _ in range(4)]; "
            "threads.append(threading.Thread(target=lambda: found.append(__import__('numpy').float64))); "
            "[t.start() for t in threads]; [t.join() for t in threads]; "
            "print(len(found), len({id(f) for f in found if f is not sys.modules['numpy'].float64}), 'dask' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["5", "1", "False"]


_UNITS = ("B/s", "GiB/s", "MB/s", "Gbit/s", "op/s", "kop/s", "s", "ms", "B", "TiB", "GB", "", "degC", "kelvin")


@example("B/s", "B/s", 2**53 + 1, 0)  # pint's factor to bits is the int 8: exact for any integer, as it must stay
@example("B/s", "bit/s", 2**53 + 1, 8 * (2**53 + 1))
@given(st.sampled_from(_UNITS), st.sampled_from(_UNITS),
       st.one_of(st.integers(0, 2**62), st.floats(0, 1e15)), st.one_of(st.integers(0, 2**62), st.floats(0, 1e15)))
def test_quantities_compare_and_hash_as_pint_does(first, second, a, b):
    """The registry's Quantity takes its factors once per pair of units (probes.core.fast_quantity): every comparison,
    equality and hash is pint's own, also across units, offsets (°C) and dimensions."""
    x, y = Q_(a, first), Q_(b, second)
    pint_class = type(x).__mro__[1]
    assert type(x).compare is not pint_class.compare  # the fast class is in use

    def outcome(call):
        try:
            return call()
        except Exception as exc:  # pint's own refusal (other dimensions, offsets) must be the same
            return type(exc)

    for op in (operator.lt, operator.le, operator.gt, operator.ge):  # pint's own __lt__ ... call the class's compare
        assert outcome(lambda: op(x, y)) == outcome(lambda: pint_class.compare(x, y, op=op)), op
    assert outcome(lambda: x == y) == outcome(lambda: pint_class.__eq__(x, y))
    assert outcome(lambda: hash(x)) == outcome(lambda: pint_class.__hash__(x))
