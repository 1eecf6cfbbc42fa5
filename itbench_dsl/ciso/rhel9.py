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
# RHEL 9's sshd_config begins with `Include /etc/ssh/sshd_config.d/*.conf`; sshd keeps the first value it reads
# for a keyword (sshd_config(5)), so a drop-in (in file-name order) overrides the main file
SSHD_DROPINS = "/etc/ssh/sshd_config.d"
TIME_UNITS = (("w", 604800), ("d", 86400), ("h", 3600), ("m", 60), ("s", 1))  # sshd_config(5), TIME FORMATS


def time_spelling(seconds: str) -> str | None:
    """A number of seconds in sshd's TIME FORMAT with units (`120` -> `2m`, `61` -> `1m1s`, `30` -> `30s`): the
    same time, another spelling; None for a value that is no positive number of seconds."""
    if not seconds.isdigit() or int(seconds) == 0:
        return None
    left, out = int(seconds), ""
    for unit, size in TIME_UNITS:
        if left >= size:
            out += f"{left // size}{unit}"
            left %= size
    return out


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
    # what else breaks the control (ciso.general grades a policy on hosts holding each, `variants`): the other
    # violating values, and the program's default where it violates (the setting left out then breaks it too)
    also_violating: tuple[str, ...] = ()
    default: str | None = None  # the value the program takes where the file holds none (None: not varied)
    also_compliant: tuple[str, ...] = ()  # other values that meet the control
    case_insensitive: bool = False  # the program reads the value in any case (sshd's yes/no)
    # the program's documented semantics of the setting, which graded hosts hold (`variants`): the values it reads
    # as "no limit" (a bound's violation whatever its figure: LoginGraceTime 0, PASS_MAX_DAYS -1), whether its
    # value is a time in sshd's TIME FORMAT (`2m` is 120 s), and the drop-in folder its main file includes first
    # (the first value read wins; keywords in any case)
    unlimited: tuple[str, ...] = ()
    time_format: bool = False
    dropins: str = ""

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
                if control.dropins:  # the main file includes its drop-ins first, as RHEL 9 ships it
                    files.setdefault(control.path, {})["Include"] = f"{control.dropins}/*.conf"
                files.setdefault(control.path, {})[control.key] = value
        return {"files": files, "services": dict(sorted(services.items()))}

    def setting(self, facts: dict) -> str | None:
        """The value the program reads on a host of these `facts` (a line setting): the first drop-in, in file-name
        order, holding the setting, else the main file's, keywords in any case where the program reads them so;
        the default where none holds it."""
        def held(settings):
            for key, value in (settings or {}).items():
                if key == self.key or (self.dropins and key.lower() == self.key.lower()):
                    return value
            return None

        files = facts.get("files") or {}
        for path in sorted(p for p in files if self.dropins and p.startswith(self.dropins + "/")):
            if held(files[path]) is not None:
                return held(files[path])
        value = held(files.get(self.path))
        return self.default if value is None else value

    def variants(self, violating: bool) -> list[tuple[str, dict]]:
        """(change, facts) of other hosts the control reads as it reads the gap host (`violating`) or the
        compliant one: each other violating value (in another case too where the program reads any case), the
        setting left out on the side its default falls on (a gap host where it violates, a compliant one where it
        complies); for a service, enabled and running varied apart (a host
        where the service runs but is disabled or masked breaks "enabled"), and on a gap host the service not
        installed at all (no entry of it in the host's services). A policy keyed on one incidental
        facet of the scenario's one violating value (the literal `yes`, the service being stopped) misses them."""
        base = self.facts(violating)
        out = []

        def edited(change, edit):
            facts = {"files": {p: dict(v) for p, v in base["files"].items()},
                     "services": {k: dict(v) for k, v in base["services"].items()}}
            edit(facts)
            out.append((change, facts))

        # the other catalogue settings as a stock host holds them (each line left out, the program's default
        # deciding: sshd's MaxAuthTries 6, login.defs' PASS_MAX_DAYS 99999) and all at their violating values: a
        # policy judging this setting only where an unrelated one is hardened misses the hosts the control is for
        for change, other in (("the other settings stock", None), ("the other settings violating", True)):
            def unhardened(f, other=other):
                for control in CONTROLS:
                    if control.id == self.id or (control.kind, control.path, control.key) == (self.kind, self.path, self.key):
                        continue
                    if control.kind == "service":
                        on = other is None  # RHEL 9 enables its services on install
                        f["services"][f"{control.key}.service"].update(state="running" if on else "stopped",
                                                                       status="enabled" if on else "disabled")
                    elif other is None:
                        f["files"][control.path].pop(control.key, None)
                    else:
                        f["files"][control.path][control.key] = control.violating
            edited(change, unhardened)
        if self.kind == "service":
            unit = f"{self.key}.service"
            if violating:
                # CIS asks `systemctl is-enabled` to print `enabled`: every other unit-file state breaks it (enabled
                # until the next boot only, started by another unit, or not installed to start at all)
                for status in SERVICE_NOT_ENABLED:
                    edited(f"running but {status}", lambda f, s=status: f["services"][unit].update(
                        state="running", status=s))
                # the service not installed: Ansible's service_facts lists only units that exist, so the host holds
                # no entry for it (`systemctl is-enabled` fails: the control is not met)
                edited("not installed", lambda f: f["services"].pop(unit))
            return out
        values = list(self.also_violating if violating else self.also_compliant)
        own = self.violating if violating else self.compliant
        if violating:
            values += [v for v in self.unlimited if v not in values]
        if self.case_insensitive:
            values.append(own.capitalize())  # `Yes`, `No`
        if self.time_format:  # the same times in another unit (`5m`, `1m`)
            values += [t for t in (time_spelling(v) for v in [own, *values]) if t and t not in values]
        for value in values:
            edited(f"{self.key} {value}", lambda f, v=value: f["files"][self.path].update({self.key: v}))
        if self.default is not None and (self.default in (self.compliant, *self.also_compliant)) != violating:
            # the setting left out: the program's default then decides, breaking the control or meeting it (sshd's
            # `X11Forwarding no`: a host without the line complies, and a policy demanding the line misjudges it)
            edited(f"without {self.key}", lambda f: f["files"][self.path].pop(self.key))
        if self.dropins:
            out.extend(self._dropin_variants(violating, base))
        return out

    def _dropin_variants(self, violating: bool, base: dict) -> list[tuple[str, dict]]:
        """Hosts whose effective setting is not the main file's: a drop-in read first holds the gap's value over a
        compliant main file (or the keyword is spelled in lower case), or the compliant value over a violating main
        file, an earlier drop-in over a later one. Only a policy resolving the setting as the program does (the
        first value read, keywords in any case) tells them apart."""
        slug = self.key.lower()
        first, later = f"{self.dropins}/01-{slug}.conf", f"{self.dropins}/50-{slug}.conf"
        out = []

        def host(main: dict, dropins: dict) -> dict:
            facts = {"files": {p: dict(v) for p, v in base["files"].items()},
                     "services": {k: dict(v) for k, v in base["services"].items()}}
            facts["files"][self.path] = main
            facts["files"].update(dropins)
            return facts

        main = dict(base["files"][self.path])
        if violating:
            ok = {**main, self.key: self.compliant}
            out.append((f"drop-in {self.key} {self.violating} over the main file's {self.compliant}",
                        host(ok, {first: {self.key: self.violating}})))
            out.append((f"drop-ins, the first with {slug} {self.violating}",
                        host(ok, {first: {slug: self.violating}, later: {self.key: self.compliant}})))
        else:
            bad = {**main, self.key: self.violating}
            out.append((f"drop-in {self.key} {self.compliant} over the main file's {self.violating}",
                        host(bad, {first: {self.key: self.compliant}})))
            out.append((f"drop-ins, the first with {slug} {self.compliant}",
                        host(bad, {first: {slug: self.compliant}, later: {self.key: self.violating}})))
        return out

    def playbook(self, hosts: str, violating: bool) -> list[dict]:
        action = "Open" if violating else "Close"
        return [{"name": f"{action} the gap of {self.id} (CIS RHEL9 {self.section}): {self.title}",
                 "hosts": hosts, "become": True, "gather_facts": False, "tasks": self.tasks(violating)}]


# `systemctl is-enabled` states other than `enabled` (systemctl(1)): a service in one of them is not enabled
SERVICE_NOT_ENABLED = ("disabled", "masked", "enabled-runtime", "static", "indirect", "linked", "generated")


def _sshd(id: str, section: str, title: str, key: str, violating: str, compliant: str, what: str,
          default: str, also_violating: tuple[str, ...] = (), also_compliant: tuple[str, ...] = (),
          unlimited: tuple[str, ...] = (), time_format: bool = False) -> HostControl:
    # sshd reads its yes/no values in any case (`Yes`); `default`: sshd's own where sshd_config holds none; every
    # sshd setting may be set in a drop-in the main file includes first
    return HostControl(id, section, title, SSHD_CONFIG, key, violating, compliant, what,
                       also_violating=also_violating, default=default, also_compliant=also_compliant,
                       case_insensitive=not violating.isdigit(), unlimited=unlimited, time_format=time_format,
                       dropins=SSHD_DROPINS)


CONTROLS: list[HostControl] = [
    _sshd("rhel9-sshd-permit-root-login", "5.2.7", "Ensure SSH root login is disabled",
          "PermitRootLogin", "yes", "no", "SSH root login", "prohibit-password",
          ("prohibit-password", "without-password", "forced-commands-only")),
    _sshd("rhel9-sshd-hostbased-auth", "5.2.8", "Ensure SSH HostbasedAuthentication is disabled",
          "HostbasedAuthentication", "yes", "no", "SSH host-based authentication", "no"),
    _sshd("rhel9-sshd-permit-empty-passwords", "5.2.9", "Ensure SSH PermitEmptyPasswords is disabled",
          "PermitEmptyPasswords", "yes", "no", "SSH logins with empty passwords", "no"),
    _sshd("rhel9-sshd-permit-user-environment", "5.2.10", "Ensure SSH PermitUserEnvironment is disabled",
          "PermitUserEnvironment", "yes", "no", "SSH user environment processing", "no"),
    _sshd("rhel9-sshd-ignore-rhosts", "5.2.11", "Ensure SSH IgnoreRhosts is enabled",
          "IgnoreRhosts", "no", "yes", "SSH IgnoreRhosts", "yes"),
    _sshd("rhel9-sshd-x11-forwarding", "5.2.12", "Ensure SSH X11 forwarding is disabled",
          "X11Forwarding", "yes", "no", "SSH X11 forwarding", "no"),
    _sshd("rhel9-sshd-max-auth-tries", "5.2.16", "Ensure SSH MaxAuthTries is set to 4 or less",
          "MaxAuthTries", "10", "4", "SSH authentication attempts per connection", "6", ("5",), ("3",)),
    _sshd("rhel9-sshd-login-grace-time", "5.2.19", "Ensure SSH LoginGraceTime is set to one minute or less",
          # sshd_config(5): "If the value is 0, there is no time limit"; a TIME FORMAT value
          "LoginGraceTime", "300", "60", "the SSH login grace time", "120", ("61",), ("30",), unlimited=("0",),
          time_format=True),
    _sshd("rhel9-sshd-client-alive-interval", "5.2.20", "Ensure SSH Idle Timeout Interval is configured",
          "ClientAliveInterval", "0", "15", "the SSH client alive interval", "0", time_format=True),
    # login.defs(5): PASS_MAX_DAYS -1 "disables the restriction" (passwords never expire)
    HostControl("rhel9-password-max-days", "5.6.1.1", "Ensure password expiration is 365 days or less",
                "/etc/login.defs", "PASS_MAX_DAYS", "99999", "365", "the maximum password age", service="",
                also_violating=("366",), default="99999", also_compliant=("90",), unlimited=("-1",)),
    HostControl("rhel9-auditd-enabled", "4.1.1.2", "Ensure auditd service is enabled", "", "auditd",
                "disabled", "enabled", "the audit daemon", service="", kind="service"),
]
