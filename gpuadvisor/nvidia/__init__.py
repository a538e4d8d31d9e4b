"""NVIDIA vocabulary shared by the capture parsers and the live probe: the Xid table and
how driver values (bus ids, modes, P-states, numbers with units) are normalised."""
