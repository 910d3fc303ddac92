"""Findings: what assessment says about one run, as data with a stable code, a severity and a remedy.

Codes (stable; scripts may rely on them), by what they look at:

against the run's ceiling (assess.findings.ceiling, its bands assess.findings.bands; what a finding is:
assess.findings.finding)
ABOVE-CEILING     error    the run is faster than any data path of the topology allows (a stated figure it exceeds
                           by under 1.5x is named as a suspect beside the cache)
POSSIBLE-IF       warning  the run is possible only if figures stated as ranges are high enough: it says which
AT-CEILING        info     the run sits at the ceiling: the binding component limits it
BELOW-CEILING     info     the run reaches 50-90 % of the ceiling: costs the model leaves out, commonly
FAR-BELOW         warning  the run reaches less than a fraction of the ceiling (info, naming it, where the ceiling
                           leaves out what makes the run hard: ior-hard's small writes to one shared file)
against the parts that existed (assess.findings.hardware, the catalogue topologies.catalogues.achievable;
assess.findings.metadata, the round trip of topologies.catalogues.metadata_bounds)
IMPLAUSIBLE-HARDWARE warning  a POSSIBLE-IF needs more of one drive or port than the fastest part of its class
                           that had shipped by the system's date achieves; or each process creates or removes
                           faster than any network's round trip and a core's answer allow
the run alone (assess.findings.alone)
FEW-REPETITIONS   warning  fewer than 3 repetitions: no honest spread or interval (info for an io500 phase, which
                           its rules run once)
HIGH-VARIATION    warning  the repetitions vary more than a quiet system's do
MAX-HEADLINE      warning  the figure is the best repetition, not the mean
SHORT-RUN         warning  repetitions too short to leave start-up and caches behind
SMALL-DATA-SET    warning  the data set fits in the memory that can cache it
OWN-WRITES        warning  reads of data the same tasks (nodes) have just written
TOOL-INVALID      warning  the benchmark itself marked the result invalid
CUT-SHORT         warning  the benchmark's output ends before its last line (an io500 result without its score)
INCONSISTENT-OUTPUT warning  the tool printed one figure twice, and the two disagree beyond rounding
TRANSFER-MISFIT   warning  the transfer size does not fit the file system's block size
the run beside others (assess.findings.siblings)
UNIT-MIXUP        warning  a ratio to the ceiling or to a sibling run is a unit factor
RANDOM-NOT-SLOWER warning  small random reads as fast as sequential ones
READ-FAR-FASTER   warning  reads far faster than the writes of the same files
an application's job, from its Darshan log (assess.findings.application; JOB_CODES)
FEW-TARGETS       warning  its files used a small share of the OSTs: the ceiling on all of them is far higher
SMALL-ACCESSES    warning  most of its bytes moved in requests under the file system's block size
SHARED-FILE-CONTENTION warning  many processes wrote shared files in small pieces not aligned to the blocks
METADATA-BOUND    warning  opens and stats of its files take most of its I/O time, as the metadata ceiling explains
METADATA-HEAVY    warning  opens and stats take most of its I/O time, far slower than the metadata ceiling allows
METADATA-FASTER   info     opens and stats take most of its I/O time, faster than the metadata ceiling allows
an MLPerf Storage training run, from DLIO's summary (assess.findings.training; TRAINING_CODES)
AU-BELOW-MINIMUM  error    its accelerator utilisation is under the benchmark's minimum
POTENTIAL-CACHING warning  the hosts' memory may hold their share of the data set: the page cache may serve reads
an MLPerf Storage checkpoint run, against the clients' generation and the storage (assess.findings.checkpoint; CHECKPOINT_CODES)
CHECKPOINT-BOUND  info     the part that bound a save or a restore: the clients' generation of the tensors, or the storage
                           (a warning where the save ran faster than the clients' stated generation allows)
a metadata phase of a list beside what like systems published (assess.findings.published; BAND_CODES)
PUBLISHED-BAND    info     its rate per server beside the published io500 band of its file system, its own runs left out
a result against the batch job that produced it, as the job's record beside it says (assess.findings.batch; BATCH_CODES)
MORE-THAN-THE-JOB error    it claims more nodes, or more processes on a node, than its job had
a KV-cache offload's storage figure against the serving node's tiers (assess.findings.kvcache; KV_CODES)
MEMORY-SERVED     error    above the storage tiers' rate: memory served it (warning on a range's greatest, info within)
"""

from probes.core.faces import lazy_exports

_EXPORTS = {
    "assess.findings.bands": ("TOLERANCE", "FAR_BELOW", "BELOW"),
    "assess.findings.finding": ("CODES", "CEILING_CODES", "Finding", "Judgement", "Part", "Severity"),
    "assess.findings.ceiling": ("bandwidth_factor", "bandwidth_summary", "ceiling_metric", "judge", "metric_factor",
                                "summary_in"),
    "assess.findings.application": ("JOB_CODES", "is_job", "part_of", "job_findings"),
    "assess.findings.training": ("TRAINING_CODES", "training_findings"),
    "assess.findings.checkpoint": ("CHECKPOINT_CODES", "checkpoint_findings"),
    "assess.findings.published": ("BAND_CODES", "band_finding"),
    "assess.findings.batch": ("BATCH_CODES", "batch_findings"),
    "assess.findings.kvcache": ("KV_CODES", "is_kv_storage", "kv_judgement"),
}
__all__ = sorted(name for names in _EXPORTS.values() for name in names)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
