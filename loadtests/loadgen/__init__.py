"""`cachegate loadtest`: drives a gateway on this machine with a workload and reports what users feel
(latency, time to first token, hit rates, false hits, savings). The verb lives in `command`."""
