"""The sniffs that choose a reader: each tool's output is taken by its own reader and by no other.

``iobound read`` tries the readers' ``looks_like`` in turn (probes.readers); a sample taken by two would be read
by whichever comes first, so each sample below is tried on every reader, text and binary.
"""

import pytest

from probes.readers import BINARY_READERS, READERS

# What a tool prints (its first lines), and the one reader whose sniff takes it (None: no reader's).
SAMPLES = [
    ('fio: pid=1, err=42\n{"fio version": "fio-3.13", "jobs": []}', "fio"),
    ('fio: pid=1, err=5/file:io_u.c:1\n{"fio version": "fio-3.13", "jobs": []}', "fio"),
    ('{"fio version": "fio-3.28", "jobs": []}', "fio"),
    ("job: (g=0): rw=read, bs=(R) 4096B-4096B, (W) 4096B-4096B, ioengine=sync, iodepth=1\n", "fio-text"),
    ("IOR-3.3.0: MPI Coordinated Test of Parallel I/O\nBegan : today\n", "ior"),
    ('{"Version": "3.3.0", "Began": "today", "tests": []}', "ior"),
    ("IOR-3.3.0: MPI Coordinated Test of Parallel I/O", "ior"),
    ("mdtest-3.4.0+dev was launched with 16 total task(s) on 1 node(s)\n", "mdtest"),
    ("SUMMARY rate: (of 1 iterations)\n   Operation   Max   Min   Mean   Std Dev\n", "mdtest"),
    ("IO500 version io500-sc21 (standard)\n[RESULT] ior-easy-write 1.0 GiB/s : time 300.0 seconds\n", "io500"),
    ("OPERATION RESULT TYPE        FIRST DONE  LAST DONE\n========= ====\n", "elbencho"),
    ('{"results": [{"command": "sleep 1", "mean": 1.0, "times": [1.0]}]}', "hyperfine"),
    ("Connecting to host 10.0.0.2, port 5201\n", "iperf3"),
    ('{"start": {"connecting_to": {}, "test_start": {}}, "intervals": [], "end": {}}', "iperf3"),
    ("Client connecting to 10.0.0.2, TCP port 5001\n", "iperf2"),
    ("[  4]  0.0- 1.0 sec   177 KBytes  1.45 Mbits/sec\n", "iperf2"),
    ("PING 10.0.0.3 (10.0.0.3) 56(84) bytes of data.\n", "ping"),
    ("Pinging www.example.com [93.184.216.34] with 32 bytes of data:\n", "ping"),
    ('{"num_accelerators": 8, "metric": {}, "num_files_train": 3200}', "mlperf"),
    ("Throughput: 6.885191 GiB/sec, Avg_Latency: 27231.054742 usecs", "gdsio"),
    ("[OUTPUT] 2025-03-19T09:21:48 Running DLIO [Checkpointing] with 2 process(es)\n"
     "[OUTPUT] 2025-03-19T09:23:25 Finished saving checkpoint 1 for epoch 1 in 77.1 s; Throughput: 1.1 GB/s", "dlio-log"),
    ('{"summary": {"cache_stats": {"tier_storage_read_bandwidth_gbps": 0.3}}}', "kv-cache"),
    ("LMCache INFO: Stored 24 out of total 24 tokens. size: 0.0015 gb, cost 1.0393 ms, throughput: 1.4094 GB/s",
     "lmcache"),
    ("op,transfer_size,value,unit\n", "table"),
    ("op,size,value\n", "table"),
    ("3.21\x00\x00\x00\x0075d\x00\x00\x00\x00\x00\x01", "darshan"),
    ('{"start": {}, "end": {}}', None),
    ("access,rank,runtime\nwrite,0,1.0\n", None),
    ('{"overall": {"train_num_accelerators": "8", "num_files_train": 3200}, "runs": {}}', None),
    ("Throughput: 6.8 GB/s", None),
    ("a,b,value\n", None),
]


@pytest.mark.parametrize("text, reader", SAMPLES, ids=[f"{reader}-{i}" for i, (_, reader) in enumerate(SAMPLES)])
def test_each_sample_is_taken_by_its_own_reader_alone(text, reader):
    taken = [name for name, module in (READERS | BINARY_READERS).items() if module.looks_like(text)]
    assert taken == ([reader] if reader else [])


def test_every_reader_has_a_sample_its_sniff_takes():
    assert set(READERS | BINARY_READERS) == {reader for _, reader in SAMPLES if reader}
