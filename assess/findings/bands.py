"""The bands a run's ratio to its ceiling falls in: at it (within TOLERANCE), below it, far below it.

``iobound check`` takes each as an option (``--tolerance``, ``--below``, ``--far-below``); these are the defaults.
"""

__all__ = ["TOLERANCE", "FAR_BELOW", "BELOW"]

# A run whose mean is within this fraction of the ceiling is "at" it, and a repetition
# more than this above it is "above": the figures behind a ceiling are measurements
# too (iperf's ~110 MiB/s), and an IOR study on a quiet Lustre system saw 5-7 % write noise (under 2 % for reads)
# between IOR repetitions on a quiet system, so 5 % is the smallest honest band.
TOLERANCE = 0.05
# Below this fraction of the ceiling a run is worth a look: half of what the
# slowest layer allows means some other part (software, layout) costs as much.
FAR_BELOW = 0.5
# Under this fraction of the ceiling (and above FAR_BELOW) a run is below it: file-service
# CPU, protocol overhead and lock contention commonly cost 10-50 %, which the model leaves out.
BELOW = 0.9
