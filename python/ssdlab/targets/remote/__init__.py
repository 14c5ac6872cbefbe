"""Drives on other hosts: the client's target, the drive host's agent and its list of
drives, the wire between them, ssh."""
