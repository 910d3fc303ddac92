"""The seeds' published numbers, judged by iobound as the seeds' authors judged them."""

import pytest

from probes.readers import table
from assess.check import check_runs

# seeds/001: IOR -b 1g -t 4m on a Lustre system reached over a 10 GbE network; the
# number of client nodes is not given, so one 10 GbE path is the ceiling they compare to.
TEN_GBE = """
[clients.c]
nic = { value = "10 GbE", source = "datasheet", note = "seeds/001: 10GbE network" }
[networks.eth]
[servers.oss]
nic = "unlimited"
[devices.ost]
bandwidth = "unlimited"
"""
SEED_001 = """run,op,transfer_size,value,unit
o_direct read,read,4 MiB,1480,MiB/s
cached read,read,4 MiB,32828,MiB/s
new data set read,read,4 MiB,1144,MiB/s
"""


def test_seed_001_reads_faster_than_10gbe_are_caught_and_the_honest_one_is_not(topology):
    judgements = {j.run.label: j for j in check_runs(topology(TEN_GBE, links="c eth oss ost"), table.parse(SEED_001, source="seed001.csv"))}
    for label, ratio in [("o_direct read", 1480 / 1192.09), ("cached read", 32828 / 1192.09)]:
        finding, single = judgements[label].findings  # (the seed published one value per run)
        assert single.code == "FEW-REPETITIONS"
        assert finding.code == "ABOVE-CEILING" and "client's page cache" in finding.message
        assert judgements[label].ratio == pytest.approx(ratio, abs=0.01)
    honest = judgements["new data set read"]
    assert [f.code for f in honest.findings] == ["AT-CEILING", "FEW-REPETITIONS"]  # 1,144 of 1,192 MiB/s: 96 %
