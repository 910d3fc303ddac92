"""probes.readers.iperf3, probes.readers.iperf2, probes.readers.ping: real network test outputs read as printed, and anything else refused clearly."""

from __future__ import annotations

import copy
import json
import math
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from probes.readers import iperf2, iperf3, ping, read_results
from probes.core.errors import ToolOutputError
from probes.core.units import Metric, ureg
from tests.garbage import mangled, read_or_refuse, refusal

READERS = {"iperf3": iperf3, "iperf2": iperf2, "ping": ping}
BW, LAT = Metric.BANDWIDTH, Metric.LATENCY

# Every network output of the corpus: (folder, file) -> (tool version, [(label, unit, samples)]).
CORPUS_FILES = {
    ("iperf3", "cloudpilot_iperf-3.9_json_tcp_200MB_aws-apsouth1_to_uswest2.json"):
        ("3.9", [("iperf3 TCP 1 stream 192.168.66.217 -> 52.35.182.129", "bit/s", 38)]),
    ("iperf3", "cloudpilot_iperf-3.9_json_tcp_t10_O3_gcp-syd_to_ibm-syd.json"):
        ("3.9", [("iperf3 TCP 1 stream 10.0.0.12 -> 168.1.194.92", "bit/s", 10)]),
    ("iperf3", "cloudpilot_iperf3_text_tcp_omit3_aws.txt"):
        (None, [("iperf3 TCP 1 stream 192.168.66.217 -> 52.35.182.129", "Mbit/s", 10)]),
    ("iperf3", "ekfoury_iperf-3.6_json_tcp_P4_60s_mininet.json"):
        ("3.6", [("iperf3 TCP 4 streams 10.0.0.1 -> 10.0.0.2", "bit/s", 60)]),
    ("iperf3", "flxo_iperf-3.12_json_tcp_P2_ipv6-linklocal.json"):
        ("3.12", [("iperf3 TCP 2 streams fe80::9eeb:e8ff:fe50:afd6 -> fe80::ca63:14ff:fe75:882f", "bit/s", 1)]),
    ("iperf3", "flxo_iperf-3.12_json_tcp_single.json"):
        ("3.12", [("iperf3 TCP 1 stream fe80::9eeb:e8ff:fe50:afd6 -> fe80::ca63:14ff:fe75:882f", "bit/s", 5)]),
    ("iperf3", "flxo_iperf-3.12_json_udp_loopback_1Mbps.json"):
        ("3.12", [("iperf3 UDP 1 stream ::1 -> ::1", "bit/s", 2)]),
    ("iperf3", "freekds_iperf3_text_udp_lan.txt"):
        (None, [("iperf3 UDP 1 stream 192.168.86.26 -> 192.168.86.28", "Mbit/s", 343)]),
    ("iperf3", "freekds_iperf3_text_udp_wan_1Mbps.txt"):
        (None, [("iperf3 UDP 1 stream 192.168.86.26 -> 62.210.18.40", "Mbit/s", 378)]),
    ("iperf2", "bufferbloat_iperf2_client_tcp_mininet_1.5Mbps.txt"):
        (None, [("iperf2 TCP 1 stream 10.0.0.1 -> 10.0.0.2", "Mbit/s", 59)]),
    ("iperf2", "congestion-control_iperf2_server_tcp_mininet.txt"):
        (None, [("iperf2 TCP 1 stream 10.0.0.1 -> 10.0.0.2", "Mbit/s", 426)]),
    ("ping", "cloudpilot_ping_4pkts_wan_214ms.txt"): (None, [("ping 34.127.52.177", "ms", 4)]),
    ("ping", "csc458_ping_bufferbloat_q100_600pkts.txt"): (None, [("ping 10.0.0.2", "ms", 588)]),
    ("ping", "csc458_ping_bufferbloat_truncated_pipe16.txt"): (None, [("ping 10.0.0.2", "ms", 19)]),
    ("ping", "lindahl_ping_windows_format.txt"):
        (None, [(f"ping www.google.com (line {n})", "ms", 5) for n in (2, 14, 27, 39)]),
    ("ping", "pkb_ping_iputils_100pkts.txt"): (None, [("ping 10.0.0.3", "ms", 100)]),
}


def _text(corpus, folder, name):
    return (corpus / folder / name).read_text(encoding="utf-8", errors="replace")


def _parse(corpus, folder, name):
    return READERS[folder].parse(_text(corpus, folder, name), source=name)


def test_the_table_lists_every_network_output_of_the_corpus(corpus):
    present = {(p.parent.name, p.name) for folder in READERS for p in (corpus / folder).iterdir() if p.is_file()}
    assert present == set(CORPUS_FILES)


@pytest.mark.parametrize("folder, name", sorted(CORPUS_FILES))
def test_every_network_output_is_read(corpus, folder, name):
    version, expected = CORPUS_FILES[folder, name]
    text = _text(corpus, folder, name)
    assert READERS[folder].looks_like(text)
    runs = READERS[folder].parse(text, source=name)
    assert [(r.label, r.unit, len(r.samples)) for r in runs] == expected
    for run in runs:
        assert run.workload is None
        assert run.metric is (LAT if folder == "ping" else BW)
        assert ureg.Unit(run.unit).is_compatible_with(run.metric.unit)
        assert (run.origin.tool, run.origin.tool_version, run.origin.path) == (folder, version, name)
        assert all(math.isfinite(s) and s >= 0 for s in run.samples)
        assert len(run.durations) == (0 if folder == "ping" else len(run.samples))
        assert all(d > 0 for d in run.durations)


# iperf3 JSON, read by hand: (samples at the start, seconds of the first interval, line, tags that must be there).
IPERF3_JSON = {
    # 38 intervals of one stream (-n 200MB): intervals[0].sum.bits_per_second (line 58), [1] (line 84).
    "cloudpilot_iperf-3.9_json_tcp_200MB_aws-apsouth1_to_uswest2.json": (
        (7065137.520898, 34407232.2150059), 1.000156044960022, 1,
        {"protocol": "TCP", "streams": "1", "reverse": "no", "sum_sent": "45009252.561555676 bit/s",
         "sum_received": "44123491.58172525 bit/s", "retransmits": "1200"}),
    # -O 3: intervals 0-2 say "omitted": true (lines 50-112); the first counted sum is line 136.
    "cloudpilot_iperf-3.9_json_tcp_t10_O3_gcp-syd_to_ibm-syd.json": (
        (1876793309.5060728, 1730140087.561467), 1.0000840425491333, 1,
        {"omitted": "3 interval(s) of the -O warm-up left out", "retransmits": "752",
         "sum_sent": "1823487704.8553271 bit/s"}),
    # "num_streams": 4 (line 54); the first interval's sum, 16979382602.686094 bit/s (line 123).
    "ekfoury_iperf-3.6_json_tcp_P4_60s_mininet.json": (
        (16979382602.686094, 15395579853.065117), 1.0002729892730713, 1,
        {"streams": "4", "sum_received": "17535714055.21963 bit/s", "retransmits": "2"}),
    # One interval of two streams; the receiver's total is below the sender's.
    "flxo_iperf-3.12_json_tcp_P2_ipv6-linklocal.json": (
        (690767214.074103,), 1.0000309944152832, 1,
        {"streams": "2", "sum_sent": "690767210.2164834 bit/s", "sum_received": "644399310.303823 bit/s"}),
    # Interrupted: "error" (line 249); the client never got the receiver's figures (0 bytes).
    "flxo_iperf-3.12_json_tcp_single.json": (
        (228353232.3418227, 223234450.0001986), 1.0001029968261719, 1,
        {"error": "interrupt - the client has terminated", "sum_received": "0.0 bit/s", "retransmits": "35"}),
    # UDP -b 1M: jitter and loss as the receiver reported them (end.sum_received).
    "flxo_iperf-3.12_json_udp_loopback_1Mbps.json": (
        (1048273.0875305922, 1048561.3752039792), 1.0002889633178711, 1,
        {"protocol": "UDP", "jitter_ms": "0.022477844208478922", "lost_packets": "0", "lost_percent": "0"}),
}


@pytest.mark.parametrize("name", sorted(IPERF3_JSON))
def test_iperf3_json_values_read_by_hand(corpus, name):
    samples, seconds, line, tags = IPERF3_JSON[name]
    [run] = _parse(corpus, "iperf3", name)
    assert run.samples[:len(samples)] == samples
    assert (run.durations[0], run.origin.line) == (pytest.approx(seconds, abs=1e-6), line)
    assert tags.items() <= dict(run.tags).items()


def test_iperf3_text_with_omitted_intervals(corpus):
    # Lines 4-6 are "(omitted)"; lines 7-16 the ten counted seconds; sender and receiver at lines 19-20.
    [run] = _parse(corpus, "iperf3", "cloudpilot_iperf3_text_tcp_omit3_aws.txt")
    assert run.samples == (31.4, 31.5, 21.0, 42.0, 21.0, 31.5, 31.5, 31.5, 31.5, 31.5)
    assert (run.origin.line, run.durations[0]) == (7, 1.0)
    tags = dict(run.tags)
    assert tags["sum_sent"] == "30.4 Mbit/s over 0.00-10.00 s"
    assert tags["sum_received"] == "30.5 Mbit/s over 0.00-10.23 s"
    assert (tags["retransmits"], tags["omitted"]) == ("60", "3 interval(s) of the -O warm-up left out")


def test_iperf3_text_cut_in_its_last_line_leaves_that_line_out(corpus):
    # Line 5 cut before its "(omitted)" would read as a measured interval: a last line without
    # its newline is not read, and the tag says so.
    text = _text(corpus, "iperf3", "cloudpilot_iperf3_text_tcp_omit3_aws.txt")
    cut = text[:text.index("(omitted)", text.index("1.00-2.00"))]
    with pytest.raises(ToolOutputError, match="^c.txt: line 1: expected interval or summary lines for the iperf3 "
                                              "test starting here; found none but intervals of the -O warm-up"):
        iperf3.parse(cut, source="c.txt")
    [run] = iperf3.parse(text[:text.index("\n", text.index("2.00-3.00", 600)) - 10], source="c.txt")
    assert run.samples == (31.4, 31.5) and dict(run.tags)["cut_line"].startswith("line 9 ends the output")


def test_iperf3_text_rates_in_other_prefixes_are_scaled_exactly(corpus):
    # Line 4 "0.00-1.02 sec 136 KBytes 1.10 Mbits/sec", line 5 "1.02-2.01 sec 120 KBytes 992 Kbits/sec".
    [run] = _parse(corpus, "iperf3", "freekds_iperf3_text_udp_wan_1Mbps.txt")
    assert run.samples[:2] == (1.1, 0.992)
    assert run.durations[:2] == (1.02, 0.99)
    assert run.samples[-1] == 1.08  # line 381, "377.01-377.55 sec 72.0 KBytes 1.08 Mbits/sec"


def test_iperf3_text_summary_without_a_side_is_kept_as_printed(corpus):
    # Interrupted old-style UDP client: one summary line with no sender/receiver word (line 349).
    [run] = _parse(corpus, "iperf3", "freekds_iperf3_text_udp_lan.txt")
    tags = dict(run.tags)
    assert tags["summary"] == "54.7 Mbit/s over 0.00-342.99 s (0.000 ms 0/286519 (0%))"
    assert "jitter_ms" not in tags  # whose jitter is not said: no tag invents it
    assert tags["error"] == "interrupt - the client has terminated"
    assert (run.samples[0], run.samples[-1]) == (62.3, 61.2)


def test_iperf_prints_bytes_in_powers_of_two_and_bits_in_powers_of_ten(corpus):
    """The evidence for the units: UDP datagrams of 8192 B add up to the KBytes and Mbits/sec printed."""
    line = re.compile(r"(\d+\.\d+)-(\d+\.\d+)\s+sec\s+(\d+) KBytes\s+(\d+\.\d+) Mbits/sec\s+(\d+)\s*$")
    checked = 0
    for text in _text(corpus, "iperf3", "freekds_iperf3_text_udp_wan_1Mbps.txt").splitlines():
        match = line.search(text)
        if match and match[1].endswith(".00") and match[2].endswith(".00"):
            start, end, kbytes, mbits, datagrams = float(match[1]), float(match[2]), int(match[3]), float(match[4]), int(match[5])
            assert kbytes == datagrams * 8192 // 1024  # KBytes = 1024 B
            assert mbits == pytest.approx(datagrams * 8192 * 8 / (end - start) / 1e6, abs=0.06)  # Mbit = 10^6 bit
            checked += 1
    assert checked >= 40  # the whole-second intervals of the file


def test_iperf2_values_read_by_hand(corpus):
    # Client: line 7 "0.0- 1.0 sec 30.4 MBytes 255 Mbits/sec", then "0.00 bits/sec" lines; the final
    # "0.0-119.7 sec 41.0 MBytes 2.87 Mbits/sec" (line 66) is the summary, not a sample.
    [client] = _parse(corpus, "iperf2", "bufferbloat_iperf2_client_tcp_mininet_1.5Mbps.txt")
    assert client.samples[:3] == (255.0, 0.0, 0.0) and client.origin.line == 7
    assert dict(client.tags)["summary"] == "2.87 Mbit/s over 0.0-119.7 s"
    # Server killed at 426 s: no summary line; it receives on its listening port 5001 (line 5).
    [server] = _parse(corpus, "iperf2", "congestion-control_iperf2_server_tcp_mininet.txt")
    assert server.samples[:3] == (1.45, 1.44, 1.41) and server.samples[-1] == 1.44
    assert dict(server.tags)["summary"] == "none: the output ends before the test's final line"
    assert server.durations[-1] == 1.0


def test_ping_values_read_by_hand(corpus):
    # Integers from 100 ms up ("time=214 ms"); the statistics at lines 8-9; CRLF line ends.
    [wan] = _parse(corpus, "ping", "cloudpilot_ping_4pkts_wan_214ms.txt")
    assert wan.samples == (214.0,) * 4
    assert dict(wan.tags) == {"format": "iputils", "host": "34.127.52.177", "transmitted": "4", "received": "4",
                              "loss_percent": "0", "rtt_summary": "min/avg/max/mdev = 214.016/214.118/214.178/0.332 ms"}
    # Replies run together on long lines ("...time=122 ms664 bytes from ..."): all 588 of the
    # statistics' "600 packets transmitted, 588 received, 2% packet loss" (line 118) are read.
    [bloat] = _parse(corpus, "ping", "csc458_ping_bufferbloat_q100_600pkts.txt")
    assert bloat.samples[:4] == (4.11, 95.2, 198.0, 237.0) and bloat.samples[-1] == 122.0
    assert (dict(bloat.tags)["received"], dict(bloat.tags)["loss_percent"]) == ("588", "2")
    assert "replies_printed" not in dict(bloat.tags)
    [lan] = _parse(corpus, "ping", "pkb_ping_iputils_100pkts.txt")
    assert lan.samples[:3] == (0.280, 0.344, 0.323) and lan.samples[-1] == 0.319


def test_ping_with_a_cut_statistics_block_and_a_missing_reply(corpus):
    # Line 23 "30 packets transmitted" is cut short; line 25 is complete and counts 20 received,
    # but only 19 reply lines were printed (seq 1-18 and 24).
    [run] = _parse(corpus, "ping", "csc458_ping_bufferbloat_truncated_pipe16.txt")
    tags = dict(run.tags)
    assert (tags["transmitted"], tags["received"], tags["loss_percent"]) == ("30", "20", "33")
    assert tags["statistics"] == "1 of 2 statistics blocks are cut short; the counts are those of the last complete one"
    assert tags["replies_printed"] == "19 reply lines; the statistics count 20 received"
    assert run.samples[-2:] == (1942.0, 2071.0)


def test_ping_cut_before_its_statistics_is_read_from_its_replies(corpus):
    text = _text(corpus, "ping", "pkb_ping_iputils_100pkts.txt")
    cut = "\n".join(text.splitlines()[:51])  # the header and replies 1-50
    [run] = ping.parse(cut, source="cut.txt")
    assert len(run.samples) == 50 and run.samples[:2] == (0.280, 0.344)
    assert dict(run.tags)["statistics"].startswith("missing: the output ends before ping's packet counts; the "
                                                  "samples are the 50 reply lines")
    assert "transmitted" not in dict(run.tags)


def test_windows_ping_runs_one_after_another(corpus):
    # Four "Pinging www.google.com [...] with 32 bytes of data:" blocks (lines 2, 14, 27, 39).
    runs = _parse(corpus, "ping", "lindahl_ping_windows_format.txt")
    assert [r.samples for r in runs[:2]] == [(13.0, 14.0, 14.0, 15.0, 15.0), (14.0, 17.0, 13.0, 15.0, 15.0)]
    assert [dict(r.tags)["address"] for r in runs] == ["172.217.1.36"] * 2 + ["172.217.8.164"] * 2
    assert dict(runs[0].tags)["rtt_summary"] == "Minimum = 13ms, Maximum = 15ms, Average = 14ms"
    assert {dict(r.tags)["format"] for r in runs} == {"Windows"}


WINDOWS_FAST = """\
Pinging 192.168.1.1 with 32 bytes of data:
Reply from 192.168.1.1: bytes=32 time<1ms TTL=64
Reply from 192.168.1.1: bytes=32 time=1ms TTL=64
Reply from 192.168.1.1: bytes=32 time<1ms TTL=64
Reply from 192.168.1.1: bytes=32 time=2ms TTL=64

Ping statistics for 192.168.1.1:
    Packets: Sent = 4, Received = 4, Lost = 0 (0% loss),
Approximate round trip times in milli-seconds:
    Minimum = 0ms, Maximum = 2ms, Average = 0ms
"""


def test_windows_replies_under_1ms_are_left_out_and_said_so():
    [run] = ping.parse(WINDOWS_FAST, source="w.txt")
    assert run.samples == (1.0, 2.0)
    tags = dict(run.tags)
    assert tags["below_1ms"].startswith("2 replies printed time<1ms are left out")
    assert "replies_printed" not in tags  # the two left out were printed: 4 of 4


def test_windows_ping_with_only_replies_under_1ms_is_refused():
    text = WINDOWS_FAST.replace("time=1ms", "time<1ms").replace("time=2ms", "time<1ms")
    with pytest.raises(ToolOutputError, match=r"^w.txt: line 1: expected replies with a round-trip time .*"
                                              r"found only replies printed time<1ms \(4\)"):
        ping.parse(text, source="w.txt")


IPV6_PING = """\
PING ::1(::1) 56 data bytes
64 bytes from ::1: icmp_seq=1 ttl=64 time=0.045 ms
64 bytes from ::1: icmp_seq=2 ttl=64 time=0.031 ms
64 bytes from ::1: icmp_seq=2 ttl=64 time=0.090 ms (DUP!)
64 bytes from ::1: icmp_seq=3 ttl=64 time=0.052 ms

--- ::1 ping statistics ---
3 packets transmitted, 3 received, +1 duplicates, 0% packet loss, time 2030ms
rtt min/avg/max/mdev = 0.031/0.054/0.090/0.022 ms
"""


def test_ipv6_ping_and_duplicate_replies():
    [run] = ping.parse(IPV6_PING, source="v6.txt")
    assert (run.label, run.samples) == ("ping ::1", (0.045, 0.031, 0.052))
    tags = dict(run.tags)
    assert tags["duplicates"] == "1 duplicate replies (DUP!) left out"
    assert (tags["transmitted"], tags["received"], tags["host"]) == ("3", "3", "::1")
    assert "address" not in tags and "replies_printed" not in tags


@pytest.mark.parametrize("text, where, found", [
    ("", "line 1", "found an empty text"),
    ("64 bytes from 10.0.0.1: icmp_seq=1 ttl=64 time=0.1 ms\n", "line 1", "start of the output is missing"),
    ("PING 10.0.0.1 (10.0.0.1) 56(84) bytes of data.\n\n--- 10.0.0.1 ping statistics ---\n"
     "3 packets transmitted, 0 received, 100% packet loss, time 2030ms\n", "line 1", "found no reply with a time"),
])
def test_ping_without_replies_is_refused(text, where, found):
    assert found in refusal(ping.parse, text, source="p.txt", where=where)


# ---------------------------------------------------------------------------------------------
# iperf3 shapes the corpus lacks, written after iperf3's format strings (esnet/iperf src/iperf_locale.c)

P2_TEXT = """\
Connecting to host 10.0.0.2, port 5201
{reverse}[  5] local 10.0.0.1 port 40000 connected to 10.0.0.2 port 5201
[  7] local 10.0.0.1 port 40002 connected to 10.0.0.2 port 5201
[ ID] Interval           Transfer     Bitrate{columns}
[  5]   0.00-1.00   sec  56.2 MBytes   472 Mbits/sec{cells}
[  7]   0.00-1.00   sec  55.0 MBytes   461 Mbits/sec{cells}
[SUM]   0.00-1.00   sec   111 MBytes   933 Mbits/sec{sum}
- - - - - - - - - - - - - - - - - - - - - - - - -
[  5]   1.00-2.00   sec  56.2 MBytes   472 Mbits/sec{cells}
[  7]   1.00-2.00   sec  55.0 MBytes   460 Mbits/sec{cells}
[SUM]   1.00-2.00   sec   111 MBytes   932 Mbits/sec{sum}
- - - - - - - - - - - - - - - - - - - - - - - - -
[ ID] Interval           Transfer     Bitrate         Retr
[  5]   0.00-2.00   sec   112 MBytes   472 Mbits/sec    1             sender
[  5]   0.00-2.04   sec   111 MBytes   458 Mbits/sec                  receiver
[  7]   0.00-2.00   sec   110 MBytes   461 Mbits/sec    2             sender
[  7]   0.00-2.04   sec   109 MBytes   449 Mbits/sec                  receiver
[SUM]   0.00-2.00   sec   222 MBytes   933 Mbits/sec    3             sender
[SUM]   0.00-2.04   sec   220 MBytes   907 Mbits/sec                  receiver

iperf Done.
"""
SENDING = {"reverse": "", "columns": "         Retr  Cwnd", "cells": "    0    375 KBytes", "sum": "    0"}
RECEIVING = {"reverse": "Reverse mode, remote host 10.0.0.2 is sending\n", "columns": "", "cells": "", "sum": ""}


def test_iperf3_text_parallel_streams_are_read_from_the_sum_lines():
    [run] = iperf3.parse(P2_TEXT.format(**SENDING), source="p2.txt")
    assert (run.label, run.samples, run.durations, run.origin.line) == (
        "iperf3 TCP 2 streams 10.0.0.1 -> 10.0.0.2", (933.0, 932.0), (1.0, 1.0), 7)
    tags = dict(run.tags)
    assert (tags["sum_sent"], tags["sum_received"]) == ("933 Mbit/s over 0.00-2.00 s", "907 Mbit/s over 0.00-2.04 s")
    assert (tags["retransmits"], tags["reverse"], tags["streams"]) == ("3", "no", "2")


def test_iperf3_text_reverse_mode_turns_the_direction_round():
    [run] = iperf3.parse(P2_TEXT.format(**RECEIVING), source="r.txt")
    # The interval header has no Retr column (the client receives); the summary's Retr says TCP.
    assert run.label == "iperf3 TCP 2 streams 10.0.0.2 -> 10.0.0.1"
    assert dict(run.tags)["reverse"] == "yes"


def test_iperf3_text_parallel_streams_cut_before_a_sum_line_are_refused():
    text = "\n".join(P2_TEXT.format(**SENDING).splitlines()[:6]) + "\n"
    with pytest.raises(ToolOutputError, match=r"^p2.txt: line 5: expected \[SUM\] lines adding up the 2 streams"):
        iperf3.parse(text, source="p2.txt")


SERVER_TEXT = """\
-----------------------------------------------------------
Server listening on 5201
-----------------------------------------------------------
Accepted connection from 10.0.0.1, port 39998
[  5] local 10.0.0.2 port 5201 connected to 10.0.0.1 port 40000
[ ID] Interval           Transfer     Bitrate
[  5]   0.00-1.00   sec   108 MBytes   904 Mbits/sec
[  5]   1.00-2.00   sec   112 MBytes   941 Mbits/sec
- - - - - - - - - - - - - - - - - - - - - - - - -
[ ID] Interval           Transfer     Bitrate
[  5]   0.00-2.04   sec   220 MBytes   905 Mbits/sec                  receiver
-----------------------------------------------------------
Server listening on 5201
-----------------------------------------------------------
Accepted connection from 10.0.0.3, port 39998
[  5] local 10.0.0.2 port 5201 connected to 10.0.0.3 port 40000
[ ID] Interval           Transfer     Bitrate
[  5]   0.00-1.00   sec   100 MBytes   839 Mbits/sec
"""


def test_iperf3_server_text_gives_a_run_per_client():
    first, second = iperf3.parse(SERVER_TEXT, source="s.txt")
    # The text does not say TCP (no Retr column): the label leaves the protocol out.
    assert (first.label, first.samples) == ("iperf3 1 stream 10.0.0.1 -> 10.0.0.2", (904.0, 941.0))
    assert dict(first.tags)["sum_received"] == "905 Mbit/s over 0.00-2.04 s"
    assert "reverse" not in dict(first.tags)
    # The second client was cut off: no summary, so who sent is not shown.
    assert (second.label, second.samples) == ("iperf3 1 stream 10.0.0.2 <-> 10.0.0.3", (839.0,))
    assert dict(second.tags)["summary"] == "none: the output ends before the test's summary lines"


BIDIR_TEXT = """\
Connecting to host 10.0.0.2, port 5201
[  5] local 10.0.0.1 port 40000 connected to 10.0.0.2 port 5201
[  7] local 10.0.0.1 port 40002 connected to 10.0.0.2 port 5201
[ ID][Role] Interval           Transfer     Bitrate         Retr  Cwnd
[  5][TX-C]   0.00-1.00   sec  56.2 MBytes   472 Mbits/sec    0    375 KBytes
[  7][RX-C]   0.00-1.00   sec  50.0 MBytes   419 Mbits/sec
[  5][TX-C]   1.00-2.00   sec  56.2 MBytes   471 Mbits/sec    0    375 KBytes
[  7][RX-C]   1.00-2.00   sec  51.0 MBytes   428 Mbits/sec
- - - - - - - - - - - - - - - - - - - - - - - - -
[ ID][Role] Interval           Transfer     Bitrate         Retr
[  5][TX-C]   0.00-2.00   sec   112 MBytes   472 Mbits/sec    0             sender
[  5][TX-C]   0.00-2.04   sec   111 MBytes   458 Mbits/sec                  receiver
[  7][RX-C]   0.00-2.00   sec   102 MBytes   428 Mbits/sec    5             sender
[  7][RX-C]   0.00-2.04   sec   101 MBytes   415 Mbits/sec                  receiver

iperf Done.
"""


def test_iperf3_text_bidir_gives_a_run_per_direction():
    sent, received = iperf3.parse(BIDIR_TEXT, source="b.txt")
    assert (sent.label, sent.samples) == ("iperf3 TCP 1 stream 10.0.0.1 -> 10.0.0.2", (472.0, 471.0))
    assert (received.label, received.samples) == ("iperf3 TCP 1 stream 10.0.0.2 -> 10.0.0.1", (419.0, 428.0))
    assert dict(received.tags)["retransmits"] == "5" and dict(received.tags)["bidir"] == "RX-C"


@pytest.mark.parametrize("line, found", [
    ("[  5]   2.00-3.00   sec  56.2 MBytes   4x2 Mbits/sec", "found '[  5]   2.00-3.00   sec  56.2 MBytes   4x2"),
    ("[  5]   3.00-2.00   sec  56.2 MBytes   472 Mbits/sec", "ends after it starts; found 3.00-2.00 sec"),
    ("[  5]   2.00-3.00   sec  56.2 MBytes   472 MBytes/sec", "expected a rate in bits per second"),
])
def test_malformed_iperf3_interval_lines_are_refused_with_the_line(line, found):
    lines = P2_TEXT.format(**SENDING).splitlines()
    text = "\n".join(lines[:10] + [line, ""])
    message = refusal(iperf3.parse, text.replace("[  7]", "[  5]").replace("[SUM]", "[  5]"), source="m.txt",
                      where="line 11")
    assert found in message, message


def _json(corpus, name="flxo_iperf-3.12_json_tcp_P2_ipv6-linklocal.json"):
    return json.loads(_text(corpus, "iperf3", name))


LOCAL, REMOTE = "fe80::9eeb:e8ff:fe50:afd6", "fe80::ca63:14ff:fe75:882f"


@pytest.mark.parametrize("reverse, server, arrow", [
    (0, False, f"{LOCAL} -> {REMOTE}"), (1, False, f"{REMOTE} -> {LOCAL}"),
    (0, True, f"{REMOTE} -> {LOCAL}"), (1, True, f"{LOCAL} -> {REMOTE}"),
])
def test_iperf3_json_direction_follows_role_and_reverse(corpus, reverse, server, arrow):
    document = _json(corpus)
    document["start"]["test_start"]["reverse"] = reverse
    if server:
        document["start"]["accepted_connection"] = document["start"].pop("connecting_to")
    [run] = iperf3.parse(json.dumps(document), source="d.json")
    assert run.label == f"iperf3 TCP 2 streams {arrow}"
    assert dict(run.tags)["reverse"] == ("yes" if reverse else "no")


def test_iperf3_json_bidir_gives_a_run_per_direction(corpus):
    document = _json(corpus)
    document["start"]["test_start"]["bidir"] = 1
    for item in document["intervals"]:
        item["sum_bidir_reverse"] = dict(item["sum"], bits_per_second=123.5, sender=False)
    document["end"]["sum_received_bidir_reverse"] = dict(document["end"]["sum_received"], bits_per_second=120.0)
    forward, backward = iperf3.parse(json.dumps(document), source="b.json")
    assert (forward.label, forward.samples) == (f"iperf3 TCP 2 streams {LOCAL} -> {REMOTE}", (690767214.074103,))
    assert (backward.label, backward.samples) == (f"iperf3 TCP 2 streams {REMOTE} -> {LOCAL}", (123.5,))
    assert dict(backward.tags)["sum_received"] == "120.0 bit/s" and "sum_sent" not in dict(backward.tags)


def test_iperf3_json_without_intervals_gives_the_receiver_total(corpus):
    document = _json(corpus)
    document["intervals"] = []
    [run] = iperf3.parse(json.dumps(document), source="i.json")
    assert (run.samples, run.durations) == ((644399310.303823,), (1.042778,))
    assert dict(run.tags)["intervals"] == "none reported; the sample is the receiver's total over the whole test"


def test_iperf3_json_error_without_results_is_quoted(corpus):
    document = _json(corpus)
    document.update(intervals=[], end={}, error="unable to connect to server: Connection refused")
    with pytest.raises(ToolOutputError, match=r"^e.json: error: expected a measurement; found iperf3 JSON with none "
                       r"\(no interval, no receiver total\): iperf3 reported: unable to connect to server"):
        iperf3.parse(json.dumps(document), source="e.json")


def test_iperf3_json_objects_one_after_another(corpus):
    one = _text(corpus, "iperf3", "flxo_iperf-3.12_json_udp_loopback_1Mbps.json")
    runs = iperf3.parse("warning: something\n" + one + "\n" + one, source="two.json")
    second = one.count("\n") + 3
    assert [r.label for r in runs] == [f"iperf3 UDP 1 stream ::1 -> ::1 (line {n})" for n in (2, second)]
    assert runs[0].samples == runs[1].samples


@pytest.mark.parametrize("edit, where", [
    (lambda d: d["intervals"][0]["sum"].update(bits_per_second="fast"), "intervals[0].sum.bits_per_second"),
    (lambda d: d["intervals"][0]["sum"].update(bits_per_second=-1), "intervals[0].sum.bits_per_second"),
    (lambda d: d["intervals"][0]["sum"].update(seconds=10**400), "intervals[0].sum.seconds"),
    (lambda d: d["intervals"][0].pop("sum"), "intervals[0].sum"),
    (lambda d: d.update(intervals={}), "intervals"),
    (lambda d: d.pop("start"), "line 1"),
])
def test_iperf3_json_errors_name_the_field(corpus, edit, where):
    document = _json(corpus)
    edit(document)
    refusal(iperf3.parse, json.dumps(document), source="f.json", where=where)


def test_iperf3_json_cut_short_names_the_line(corpus):
    text = _text(corpus, "iperf3", "flxo_iperf-3.12_json_udp_loopback_1Mbps.json")
    # Cut after line 40, '"intervals": [' with nothing after it: the decoder stops at its end.
    with pytest.raises(ToolOutputError, match=r"^c.json: line 40: expected iperf3's JSON; found invalid JSON"):
        iperf3.parse("\n".join(text.splitlines()[:40]), source="c.json")


# ---------------------------------------------------------------------------------------------
# iperf 2 shapes the corpus lacks

IPERF2_PARALLEL = """\
------------------------------------------------------------
Client connecting to 10.0.0.2, TCP port 5001
TCP window size: 85.0 KByte (default)
------------------------------------------------------------
[  4] local 10.0.0.1 port 41000 connected with 10.0.0.2 port 5001
[  3] local 10.0.0.1 port 40998 connected with 10.0.0.2 port 5001
[ ID] Interval       Transfer     Bandwidth
[  4]  0.0- 1.0 sec  56.2 MBytes   472 Mbits/sec
[  3]  0.0- 1.0 sec  55.0 MBytes   461 Mbits/sec
[SUM]  0.0- 1.0 sec   111 MBytes   933 Mbits/sec
[  4]  1.0- 2.0 sec  56.0 MBytes   470 Mbits/sec
[  3]  1.0- 2.0 sec  55.1 MBytes   462 Mbits/sec
[SUM]  1.0- 2.0 sec   111 MBytes   932 Mbits/sec
[  4]  0.0- 2.0 sec   112 MBytes   471 Mbits/sec
[  3]  0.0- 2.0 sec   110 MBytes   461 Mbits/sec
[SUM]  0.0- 2.0 sec   222 MBytes   932 Mbits/sec
"""

IPERF2_UDP = """\
------------------------------------------------------------
Client connecting to 10.0.0.2, UDP port 5001
Sending 1470 byte datagrams
UDP buffer size:  208 KByte (default)
------------------------------------------------------------
[  3] local 10.0.0.1 port 50000 connected with 10.0.0.2 port 5001
[ ID] Interval       Transfer     Bandwidth
[  3]  0.0- 1.0 sec   131 KBytes  1.07 Mbits/sec
[  3]  1.0- 2.0 sec   128 KBytes  1.05 Mbits/sec
[  3]  0.0- 2.0 sec   259 KBytes  1.06 Mbits/sec
[  3] Sent 181 datagrams
[  3] Server Report:
[  3]  0.0- 2.0 sec   259 KBytes  1.06 Mbits/sec   0.018 ms    1/  181 (0.55%)
"""


def test_iperf2_parallel_streams_are_one_run_from_the_sum_lines():
    [run] = iperf2.parse(IPERF2_PARALLEL, source="p.txt")
    assert (run.label, run.samples, run.origin.line) == ("iperf2 TCP 2 streams 10.0.0.1 -> 10.0.0.2", (933.0, 932.0), 10)
    assert dict(run.tags)["summary"] == "932 Mbit/s over 0.0-2.0 s"


def test_iperf2_udp_server_report_gives_jitter_and_loss():
    [run] = iperf2.parse(IPERF2_UDP, source="u.txt")
    assert (run.label, run.samples) == ("iperf2 UDP 1 stream 10.0.0.1 -> 10.0.0.2", (1.07, 1.05))
    tags = dict(run.tags)
    assert (tags["jitter_ms"], tags["lost_packets"], tags["lost_percent"]) == ("0.018", "1 of 181", "0.55")
    assert tags["summary"] == "1.06 Mbit/s over 0.0-2.0 s"


def test_iperf2_server_log_of_several_clients_gives_a_run_each(corpus):
    text = _text(corpus, "iperf2", "congestion-control_iperf2_server_tcp_mininet.txt")
    lines = text.splitlines()
    again = "\n".join(lines[:20] + [lines[4].replace("56591", "56600"), lines[5]] + lines[6:10])
    first, second = iperf2.parse(again, source="s.txt")
    assert (len(first.samples), len(second.samples), second.origin.line) == (14, 4, 23)
    assert first.label == "iperf2 TCP 1 stream 10.0.0.1 -> 10.0.0.2 (line 7)"


def test_iperf2_without_intervals_is_refused():
    text = "------\nClient connecting to 10.0.0.2, TCP port 5001\nconnect failed: Connection refused\n"
    with pytest.raises(ToolOutputError, match=r"^x.txt: line 1: expected interval lines .*: the output is truncated"):
        iperf2.parse(text, source="x.txt")


# ---------------------------------------------------------------------------------------------
# Other tools' files, truncation and fuzzing


@pytest.mark.parametrize("folder", sorted(READERS))
def test_files_of_other_tools_are_refused_by_name(corpus, folder):
    text = _text(corpus, "fio", "fio-examples_fio-seq-write.fio")
    with pytest.raises(ToolOutputError, match=r"^job.fio: line 1: expected (iperf3's|iperf 2's|ping's) output"):
        READERS[folder].parse(text, source="job.fio")


def _consistent(full, cut):
    """Every run of the cut text is a run of the whole text with fewer samples, or equal."""
    by_line = {run.origin.line: run for run in full}
    for run in cut:
        whole = by_line[run.origin.line]
        assert run.unit == whole.unit and run.metric == whole.metric
        assert run.samples == whole.samples[:len(run.samples)], run.label


@pytest.mark.slow
@pytest.mark.parametrize("folder, name", sorted(CORPUS_FILES))
def test_truncated_outputs_raise_tool_output_errors_or_keep_what_is_complete(corpus, folder, name):
    text = _text(corpus, folder, name)
    full = READERS[folder].parse(text, source=name)
    lines = text.splitlines(keepends=True)
    cuts = ["".join(lines[:k]) for k in range(1, len(lines), 7)]
    cuts += [text[:k] for k in (1, 50, len(text) - 2) + tuple(len(text) * i // 9 for i in range(1, 9))]
    for cut in cuts:
        try:
            runs = READERS[folder].parse(cut, source=name)
        except ToolOutputError as exc:
            assert re.match(f"^{re.escape(name)}: line [0-9]+: expected", str(exc)), str(exc)
        else:
            _consistent(full, runs)


JUNK = ["", "\n", "[SUM]", "[  5]", " sec ", "Bytes", " Mbits/sec", "(omitted)", "sender", "receiver", "time<1ms",
        "time=1ms", " ms", "{", "}", ",", "nan", "- - -", "[ ID] Interval  Transfer  Bitrate\n", "(DUP!)"]


CORPUS_TEXTS: dict[tuple[str, str], str] = {}


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(st.data())
def test_cut_and_mangled_real_outputs_are_read_or_refused(corpus, data):
    folder, name = data.draw(st.sampled_from(sorted(CORPUS_FILES)))
    if (folder, name) not in CORPUS_TEXTS:
        CORPUS_TEXTS[folder, name] = _text(corpus, folder, name)
    text = CORPUS_TEXTS[folder, name]
    changed, cut = mangled(data, text, JUNK, within=400)
    read_or_refuse(folder, changed)
    read_or_refuse(folder, cut)


@settings(max_examples=100, deadline=None)
@given(st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=6),
                    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
                    max_leaves=10))
@pytest.mark.slow
def test_any_json_is_read_or_refused(value):
    base = {"start": {"connecting_to": {}, "test_start": {"protocol": "TCP", "num_streams": 1}},
            "intervals": [{"sum": {"bits_per_second": 1.0, "seconds": 1.0}}], "end": {}}
    for path in (("start",), ("start", "test_start"), ("intervals",), ("intervals", 0), ("intervals", 0, "sum"),
                 ("end",), ("end", "sum_received"), ("start", "connected"), ("start", "test_start", "bidir")):
        document = copy.deepcopy(base)
        parent = document
        for key in path[:-1]:
            parent = parent[key]
        parent[path[-1]] = value
        read_or_refuse("iperf3", json.dumps(document))


# ---------------------------------------------------------------------------------------------
# Issue 19: real outputs made here (tests/data/readers, see its README) that were refused or misread

DATA = Path(__file__).parent / "data" / "readers"


def _data(name):
    return (DATA / name).read_text(encoding="utf-8")


def _written(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_iperf3_text_cut_at_the_interval_header_is_read(tmp_path):
    """A -P 10 run whose output lost its top: every line left is iperf3's, and its times say so ("0.00-1.00   sec")."""
    whole = _data("iperf3-3.12_text_tcp_P10_loopback.txt")
    cut = whole[whole.index("[ ID] Interval"):]
    assert iperf3.looks_like(cut) and not iperf2.looks_like(cut)
    [run] = read_results(_written(tmp_path, "cut.txt", cut))
    [full] = iperf3.parse(whole, source="whole.txt")
    assert (run.label, run.samples, run.unit) == ("iperf3 TCP 10 streams", (25.4, 25.2), "Gbit/s")
    assert run.samples == full.samples and full.label == "iperf3 TCP 10 streams 127.0.0.1 -> 127.0.0.1"
    tags = dict(run.tags)
    assert (tags["streams"], tags["sum_sent"]) == ("10", "25.3 Gbit/s over 0.00-2.00 s")
    assert tags["connection"].startswith("not shown: the output starts at line 1 without iperf3's 'Connecting to host'")
    assert "connection" not in dict(full.tags) and "inconsistent" not in tags


def test_iperf3_json_of_a_run_that_never_connected_says_what_it_is(tmp_path):
    path = DATA / "iperf3-3.12_json_never_connected.json"
    with pytest.raises(ToolOutputError) as err:
        read_results(path)
    assert str(err.value) == (f"{path}: error: expected a measurement; found iperf3 JSON with none (no interval, no "
                              "receiver total, no connection in start.connected): iperf3 reported: unable to connect to "
                              "server: Connection refused")


def test_iperf3_intervals_that_do_not_add_up_to_the_total_are_tagged():
    whole = _data("iperf3-3.12_text_tcp_P10_loopback.txt")
    total = "[SUM]   0.00-2.00   sec  5.90 GBytes  25.3 Gbits/sec    0             sender"
    edited = whole.replace(total, total.replace("5.90 GBytes  25.3", "7.26 GBytes  31.2"))
    assert edited != whole
    [run] = iperf3.parse(edited, source="e.txt")
    assert dict(run.tags)["inconsistent"] == ("the intervals add up to 5.9 GBytes over 0.00-2.00 s; the sender's "
                                              "total says 7.26 GBytes over 0.00-2.00 s")
    # 2.96 + 2.94 = 5.90 GBytes within the last printed digit of each: no tag
    assert "inconsistent" not in dict(iperf3.parse(whole, source="w.txt")[0].tags)


def test_iperf3_json_bytes_that_do_not_add_up_are_tagged(corpus):
    document = _json(corpus, "flxo_iperf-3.12_json_tcp_single.json")
    [clean] = iperf3.parse(json.dumps(document), source="c.json")
    document["end"]["sum_sent"]["bytes"] = 166522861  # 1.23 x the 135,384,440 bytes its intervals add up to
    [run] = iperf3.parse(json.dumps(document), source="e.json")
    assert "inconsistent" not in dict(clean.tags)
    assert dict(run.tags)["inconsistent"] == ("the intervals add up to 135,384,440 bytes over 4.834 s; end.sum_sent "
                                              "says 166,522,861 bytes over 4.834 s")


def test_every_corpus_network_output_adds_up(corpus):
    for folder, name in CORPUS_FILES:
        for run in _parse(corpus, folder, name):
            assert "inconsistent" not in dict(run.tags), (name, dict(run.tags)["inconsistent"])


def test_iperf2_file_of_several_tests_gives_one_run_per_test():
    """-P 2 is one run of 2 streams ([SUM]), also when its streams' final lines end at other times than the [SUM]'s."""
    runs = iperf2.parse(_data("iperf2-2.1.8_client_three_tests.txt"), source="t.txt")
    assert [(r.label, r.samples, dict(r.tags)["streams"]) for r in runs] == [
        ("iperf2 TCP 1 stream 127.0.0.1 -> 127.0.0.1", (22.4, 24.7), "1"),
        ("iperf2 TCP 2 streams 127.0.0.1 -> 127.0.0.1 (line 19)", (23.4, 24.1), "2"),
        ("iperf2 TCP 2 streams 127.0.0.1 -> 127.0.0.1 (line 35)", (33.7,), "2")]
    assert [dict(r.tags)["summary"] for r in runs] == [
        "23.4 Gbit/s over 0.0000-1.0045 s", "23.8 Gbit/s over 0.0000-1.0001 s", "33.7 Gbit/s over 0.0000-1.0015 s"]
    assert dict(runs[2].tags)["intervals"] == "none printed (no -i): the sample is the final line over the whole test"
    assert not any("inconsistent" in dict(r.tags) for r in runs)


# iperf 2.0's "%4.1f" times, two tests in one file; the -P 2 test's streams end at 10.0 and 10.1 s, its [SUM] at 10.0.
IPERF2_TWO_TESTS = """\
------------------------------------------------------------
Client connecting to 10.0.0.2, TCP port 5001
TCP window size: 85.0 KByte (default)
------------------------------------------------------------
[  3] local 10.0.0.1 port 40000 connected with 10.0.0.2 port 5001
[ ID] Interval       Transfer     Bandwidth
[  3]  0.0-10.0 sec  1.10 GBytes   945 Mbits/sec
------------------------------------------------------------
Client connecting to 10.0.0.2, TCP port 5001
TCP window size: 85.0 KByte (default)
------------------------------------------------------------
[  4] local 10.0.0.1 port 40002 connected with 10.0.0.2 port 5001
[  3] local 10.0.0.1 port 40001 connected with 10.0.0.2 port 5001
[ ID] Interval       Transfer     Bandwidth
[  4]  0.0-10.0 sec  1.15 GBytes   985 Mbits/sec
[  3]  0.0-10.1 sec  1.15 GBytes   980 Mbits/sec
[SUM]  0.0-10.0 sec  2.29 GBytes  1.97 Gbits/sec
"""


def test_iperf2_parallel_streams_ending_apart_are_still_one_run():
    single, parallel = iperf2.parse(IPERF2_TWO_TESTS, source="two.txt")
    assert (single.label, single.samples, dict(single.tags)["summary"]) == (
        "iperf2 TCP 1 stream 10.0.0.1 -> 10.0.0.2", (945.0,), "945 Mbit/s over 0.0-10.0 s")
    assert (parallel.label, parallel.samples, parallel.unit) == ("iperf2 TCP 2 streams 10.0.0.1 -> 10.0.0.2", (1.97,),
                                                                 "Gbit/s")
    assert dict(parallel.tags)["summary"] == "1.97 Gbit/s over 0.0-10.0 s"


def test_iperf2_server_groups_the_sum_of_a_parallel_client_and_keeps_an_interrupted_one():
    parallel, interrupted = iperf2.parse(_data("iperf2-2.1.8_server_P2_and_interrupted.txt"), source="s.txt")
    assert (parallel.label, parallel.samples) == ("iperf2 TCP 2 streams 127.0.0.1 -> 127.0.0.1", (42.2, 41.1))
    assert (interrupted.label, interrupted.samples) == ("iperf2 TCP 1 stream 127.0.0.1 -> 127.0.0.1",
                                                        (22.9, 8.74, 8.53, 23.4))
    assert dict(interrupted.tags)["summary"] == "15.1 Gbit/s over 0.0000-1.8001 s"


@pytest.mark.parametrize("cut_at", ["[ ID] Interval", "[  1] 0.0000-0.5000"])
def test_iperf2_interval_lines_alone_are_read_and_say_what_is_missing(tmp_path, cut_at):
    """A server killed during a test (SIGKILL): intervals and no final line; cut before its header, only they remain."""
    whole = _data("iperf2-2.1.8_server_killed.txt")
    cut = whole[whole.index(cut_at):]
    assert iperf2.looks_like(cut) and not iperf3.looks_like(cut)
    [run] = read_results(_written(tmp_path, "cut.txt", cut))
    [full] = iperf2.parse(whole, source="w.txt")
    assert (run.origin.tool, run.label, run.samples) == ("iperf2", "iperf2 1 stream", (19.5, 14.5, 8.84))
    assert run.samples == full.samples and full.label == "iperf2 TCP 1 stream 127.0.0.1 -> 127.0.0.1"
    tags = dict(run.tags)
    assert tags["summary"] == "none: the output ends before the test's final line"
    assert tags["connection"].startswith("not shown: the text holds iperf 2's interval lines without its 'Client "
                                         "connecting to' or 'Server listening on' header")
    assert "connection" not in dict(full.tags)


def test_iperf2_2_0_interval_lines_alone_are_iperf2s():
    text = "[  4]  0.0- 1.0 sec   177 KBytes  1.45 Mbits/sec\n[  4]  1.0- 2.0 sec   175 KBytes  1.44 Mbits/sec\n"
    assert (iperf2.looks_like(text), iperf3.looks_like(text)) == (True, False)
    [run] = iperf2.parse(text, source="s.txt")
    assert (run.label, run.samples, run.unit) == ("iperf2 1 stream", (1.45, 1.44), "Mbit/s")


def test_iperf2_final_line_that_does_not_add_up_is_tagged():
    text = _data("iperf2-2.1.8_client_three_tests.txt")
    final = "[  1] 0.0000-1.0045 sec  2.74 GBytes  23.4 Gbits/sec"
    edited = text.replace(final, final.replace("2.74 GBytes  23.4", "3.37 GBytes  28.8"))
    run = iperf2.parse(edited, source="e.txt")[0]
    assert dict(run.tags)["inconsistent"] == ("the intervals add up to 2.74 GBytes over 0.0000-1.0000 s; the final "
                                              "line says 3.37 GBytes over 0.0000-1.0045 s")


def test_ping_statistics_that_share_a_line_with_other_text_are_read():
    """A log that lost line breaks or stamped the time before ping's lines: the statistics are still ping's."""
    text = _data("ping-iputils_loopback_4pkts.txt")
    lines = text.splitlines()
    assert (lines[5], lines[6]) == ("", "--- 127.0.0.1 ping statistics ---")
    glued = "\n".join(lines[:4]) + "\n" + lines[4] + "^C" + lines[6] + " [1716800000.123] " + lines[7] + "\n" + lines[8]
    [clean], [run] = ping.parse(text, source="p.txt"), ping.parse(glued, source="g.txt")
    assert run.samples == clean.samples == (0.042, 0.086, 0.025, 0.027)
    tags = dict(run.tags)
    assert (tags["transmitted"], tags["received"], tags["loss_percent"]) == ("4", "4", "0")
    assert tags["rtt_summary"] == "min/avg/max/mdev = 0.025/0.045/0.086/0.024 ms" and "statistics" not in tags
    assert dict(ping.parse(" ".join(lines), source="one.txt")[0].tags)["received"] == "4"  # every line on one


def test_each_made_output_is_claimed_by_its_own_reader_only():
    from probes.readers import READERS
    expected = {"iperf3": "iperf3", "iperf2": "iperf2", "ping-": "ping", "fio-2": "fio-text", "fio-3": "fio"}
    for path in sorted(DATA.glob("*-*")):
        claimed = [name for name, module in READERS.items() if module.looks_like(path.read_text(encoding="utf-8"))]
        assert claimed == [next(v for k, v in expected.items() if path.name.startswith(k))], (path.name, claimed)
