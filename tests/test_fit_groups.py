"""`iobound fit` on runs that differ in more than what the sweep varies: each group fitted on its own and named, never
one curve through Lustre, OrangeFS and other processes per node together."""

from __future__ import annotations

import json

from assess.cli import main

# s / (t0 + s / B) for two file systems, two repetitions each (±1 %), and a third system measured at one size only.
LAWS = {"Lustre": (50e-6, 1000 * 2**20), "OrangeFS": (200e-6, 400 * 2**20)}
SIZES = (4096, 65536, 2**20, 16 * 2**20)


def _sweep(path):
    rows = ["system,op,transfer_size,nodes,ppn,value,unit,run"]
    for system, (t0, bandwidth) in LAWS.items():
        for size in SIZES:
            for rep, noise in enumerate((0.99, 1.01)):
                rows.append(f"{system},write,{size} B,10,1,{size / (t0 + size / bandwidth) * noise / 2**20!r},MiB/s,"
                            f"{system} {size}")
    rows.append("BeeGFS,write,1 MiB,10,1,700,MiB/s,BeeGFS 1 MiB")
    path.write_text("\n".join(rows) + "\n")
    return path


def test_fit_refuses_to_mix_the_lectures_file_systems_and_processes_per_node_naming_the_groups(capsys):
    """The bundled lecture results: Lustre and OrangeFS, 1 to 12 processes per node, a size or two each."""
    assert main(["fit", "lecture-results.csv", "--over", "transfer-size", "--op", "read"]) == 2
    out, err = capsys.readouterr()
    assert not out and err.count("\n") == 1
    assert "no group of runs that differ only in their transfer-size can be fitted" in err
    assert "system=Lustre, table=fixed size, ppn=1 (1 point at 1 transfer size)" in err
    assert "system=OrangeFS, table=fixed size, ppn=12 (2 points at 2 transfer sizes)" in err


def test_fit_fits_each_file_system_on_its_own_and_says_which_it_could_not(tmp_path, capsys):
    sweep = _sweep(tmp_path / "sweep.csv")
    assert main(["fit", str(sweep), "--over", "transfer-size", "--at", "64MiB", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    fits = {f["group"]: f for f in doc["fits"]}
    assert set(fits) == {"system=Lustre", "system=OrangeFS"}
    for system, (t0, bandwidth) in LAWS.items():
        fitted = fits[f"system={system}"]
        assert fitted["n"] == 8 and fitted["r_squared"] > 0.99
        assert abs(fitted["parameters"]["B"]["value"] / bandwidth - 1) < 0.05
    (refused,) = doc["not_fitted"]
    assert refused["group"] == "system=BeeGFS" and refused["runs"] == ["BeeGFS 1 MiB"]
    assert "need at least" in refused["reason"]
    assert main(["fit", str(sweep), "--over", "transfer-size"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("3 groups of runs differ in more than their transfer-size: each is fitted on its own.")
    assert "group:     system=Lustre (4 runs)" in out and "group:     system=OrangeFS (4 runs)" in out
    assert "not fitted:\n  system=BeeGFS: 2 parameters need at least 3 points" in out
