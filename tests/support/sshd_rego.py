"""Rego that reads an sshd setting as sshd does: the first drop-in of /etc/ssh/sshd_config.d/ (by name) holding
the keyword in any case, else the main file, else the program's default. Right answers of host-control tests."""


def effective_rule(name: str) -> str:
    """The Rego function `name(host, key, fallback)` (and its helper `dropins`)."""
    return SSHD_SETTING.replace("sshd(host, key, fallback)", f"{name}(host, key, fallback)")


SSHD_SETTING = """
dropins(host, key) := [p |
  some p
  f := host.files[p]
  startswith(p, "/etc/ssh/sshd_config.d/")
  some k
  f[k]
  lower(k) == key
]

sshd(host, key, fallback) := value if {
  paths := sort(dropins(host, key))
  some k, value in host.files[paths[0]]
  lower(k) == key
} else := value if {
  some k, value in host.files["/etc/ssh/sshd_config"]
  lower(k) == key
} else := fallback
"""
