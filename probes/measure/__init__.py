"""The component probes: fio, iperf3 and ping run on this node, repeated until their intervals are narrow, saved as probe sets."""
