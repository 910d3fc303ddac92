"""The base vocabulary every stage speaks: units, statistics, workloads, runs, measurements and errors."""
