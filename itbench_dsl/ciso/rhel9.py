"""CIS Red Hat Enterprise Linux 9 Benchmark host controls as reusable policy gaps.

A host control is a setting of the RHEL9 machine(s) of an Ansible inventory group. It compiles
to two Ansible play lists, like ITBench's class-3 `tasks/fault_inject.yml` and
`fault_removal.yml`: `inject/playbook.yml` sets the violating value, `revert/playbook.yml` the
compliant one (the optimum the agent's check must accept).
"""

from __future__ import annotations

from dataclasses import dataclass

from .tasks import TASK_CLASSES

RHEL9_BENCHMARK = "CIS Red Hat Enterprise Linux 9 Benchmark"
RHEL9_CLASSES = tuple(c.task for c in TASK_CLASSES.values() if c.platform == "rhel9")
DEFAULT_HOSTS = "rhel9_servers"  # ITBench's inventory group (input.json `inventory_host`)
SSHD_CONFIG = "/etc/ssh/sshd_config"


@dataclass(frozen=True)
class HostControl:
    id: str  # "rhel9-sshd-permit-root-login"
    section: str  # "5.2.7"
    title: str  # the CIS recommendation, the default goal text
    path: str  # the file holding the setting ("" for a service)
    key: str  # the setting (sshd keyword, login.defs key) or the service name
    violating: str  # the value that opens the gap
    compliant: str  # the compliant value (the optimum)
    what: str  # the setting in words, for task names
    service: str = "sshd"  # restarted after a change ("" for none)
    benchmark: str = RHEL9_BENCHMARK
    classes: tuple[str, ...] = RHEL9_CLASSES
    kind: str = "line"  # "line": a `key value` line; "service": a service enabled/started or not

    def tasks(self, violating: bool) -> list[dict]:
        value = self.violating if violating else self.compliant
        if self.kind == "service":
            if violating:
                return [
                    {"name": f"Disable the {self.key} service", "ansible.builtin.service": {
                        "name": self.key, "enabled": False}},
                    # auditd refuses `systemctl stop` (RefuseManualStop): its own init script stops it
                    {"name": f"Stop the {self.key} service", "ansible.builtin.command": {
                        "cmd": f"service {self.key} stop"}, "changed_when": True},
                ]
            return [{"name": f"Enable and start the {self.key} service", "ansible.builtin.service": {
                "name": self.key, "enabled": True, "state": "started"}}]
        line = {"path": self.path, "regexp": rf"^\s*#?\s*{self.key}\s", "line": f"{self.key} {value}",
                "state": "present"}
        if self.path == SSHD_CONFIG:
            line["validate"] = "/usr/sbin/sshd -t -f %s"
        tasks = [{"name": f"Set {self.what} to {value} ({self.key} {value})", "ansible.builtin.lineinfile": line}]
        if self.service:
            tasks.append({"name": f"Restart the {self.service} service to apply the change",
                          "ansible.builtin.service": {"name": self.service, "state": "restarted"}})
        return tasks

    def facts(self, violating: bool) -> dict:
        """A host's settings as the Rego input of a host control holds them (ciso/tasks.py, INPUT_SHAPES):
        every catalogue host control's setting at its compliant value, this control's at the violating one
        where `violating`; the gap host and the compliant one differ in that setting alone."""
        files: dict = {}
        services: dict = {}
        for control in CONTROLS:
            bad = violating and control.id == self.id
            value = control.violating if bad else control.compliant
            if control.kind == "service":
                on = value == "enabled"
                services[f"{control.key}.service"] = {"name": f"{control.key}.service", "source": "systemd",
                                                      "state": "running" if on else "stopped",
                                                      "status": "enabled" if on else "disabled"}
            else:
                files.setdefault(control.path, {})[control.key] = value
        return {"files": files, "services": dict(sorted(services.items()))}

    def playbook(self, hosts: str, violating: bool) -> list[dict]:
        action = "Open" if violating else "Close"
        return [{"name": f"{action} the gap of {self.id} (CIS RHEL9 {self.section}): {self.title}",
                 "hosts": hosts, "become": True, "gather_facts": False, "tasks": self.tasks(violating)}]


def _sshd(id: str, section: str, title: str, key: str, violating: str, compliant: str, what: str) -> HostControl:
    return HostControl(id, section, title, SSHD_CONFIG, key, violating, compliant, what)


CONTROLS: list[HostControl] = [
    _sshd("rhel9-sshd-permit-root-login", "5.2.7", "Ensure SSH root login is disabled",
          "PermitRootLogin", "yes", "no", "SSH root login"),
    _sshd("rhel9-sshd-hostbased-auth", "5.2.8", "Ensure SSH HostbasedAuthentication is disabled",
          "HostbasedAuthentication", "yes", "no", "SSH host-based authentication"),
    _sshd("rhel9-sshd-permit-empty-passwords", "5.2.9", "Ensure SSH PermitEmptyPasswords is disabled",
          "PermitEmptyPasswords", "yes", "no", "SSH logins with empty passwords"),
    _sshd("rhel9-sshd-permit-user-environment", "5.2.10", "Ensure SSH PermitUserEnvironment is disabled",
          "PermitUserEnvironment", "yes", "no", "SSH user environment processing"),
    _sshd("rhel9-sshd-ignore-rhosts", "5.2.11", "Ensure SSH IgnoreRhosts is enabled",
          "IgnoreRhosts", "no", "yes", "SSH IgnoreRhosts"),
    _sshd("rhel9-sshd-x11-forwarding", "5.2.12", "Ensure SSH X11 forwarding is disabled",
          "X11Forwarding", "yes", "no", "SSH X11 forwarding"),
    _sshd("rhel9-sshd-max-auth-tries", "5.2.16", "Ensure SSH MaxAuthTries is set to 4 or less",
          "MaxAuthTries", "10", "4", "SSH authentication attempts per connection"),
    _sshd("rhel9-sshd-login-grace-time", "5.2.19", "Ensure SSH LoginGraceTime is set to one minute or less",
          "LoginGraceTime", "300", "60", "the SSH login grace time"),
    _sshd("rhel9-sshd-client-alive-interval", "5.2.20", "Ensure SSH Idle Timeout Interval is configured",
          "ClientAliveInterval", "0", "15", "the SSH client alive interval"),
    HostControl("rhel9-password-max-days", "5.6.1.1", "Ensure password expiration is 365 days or less",
                "/etc/login.defs", "PASS_MAX_DAYS", "99999", "365", "the maximum password age", service=""),
    HostControl("rhel9-auditd-enabled", "4.1.1.2", "Ensure auditd service is enabled", "", "auditd",
                "disabled", "enabled", "the audit daemon", service="", kind="service"),
]
