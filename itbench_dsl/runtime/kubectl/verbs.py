"""The verbs: each kubectl verb as the change it sends (scale, set, patch, apply, replace, delete,
rollout, label, annotate, create, edit, exec ...), and the dispatch of a command to its verb.
"""

from __future__ import annotations

import base64
import copy
import fnmatch
import json
import re
from collections.abc import Callable
from typing import Any

from .state import (
    APPLIED,
    _Context,
    LAST_APPLIED_ANNOTATION,
    Outcome,
    READ_ONLY,
    _refused,
    RESTARTED_AT,
    RESTARTED_AT_ANNOTATION,
    _Stop,
    _unsupported,
)
from .command import _dry_run, _Invocation, _READ_ONLY_SUBCOMMANDS, _READ_ONLY_VERBS, _UNSUPPORTED_VERBS
from .resources import _key, _not_found, _Resource, _resource
from .files import _bundle_paths, _identify, _manifests, _yaml_documents
from .targets import _existing, _labels, _select, _Target, _when
from .server import _create_object, _dict_at, _dig, _POD_SPEC_PATHS, _pruned, _quantity, _SCALABLE, _spec, _update
from .patches import _json_patch, _merge_key, _merge_patch, _strategic_merge


def _dispatch(ctx: _Context, inv: _Invocation) -> Outcome:
    """Runs a kubectl command: read-only verbs change nothing, dry runs neither, the rest by their handler."""
    verb = inv.verb
    if not verb:
        return Outcome(READ_ONLY, f"`{inv.program}` without a command only prints its help")
    sub = inv.words[1] if len(inv.words) > 1 else ""
    if verb in _READ_ONLY_VERBS or sub in _READ_ONLY_SUBCOMMANDS.get(verb, ()):
        return Outcome(READ_ONLY, f"`{inv.text}` only reads, so it changes nothing")
    if verb == "exec" and ctx.execs:
        return _known_exec(ctx, inv)
    if verb in _UNSUPPORTED_VERBS:
        raise _unsupported(f"`{inv.program} {verb}` {_UNSUPPORTED_VERBS[verb]}")
    handler = _HANDLERS.get(verb)
    if handler is None:
        raise _unsupported(f"`{inv.text}` is not a kubectl command this replay carries out")
    if _dry_run(inv):
        return Outcome(READ_ONLY, f"`{inv.text}` with --dry-run changes nothing")
    if inv.last("kustomize") is not None:
        raise _unsupported("`-k` builds manifests with kustomize, which cannot be replayed")
    answer = handler(ctx, inv)
    return answer if isinstance(answer, Outcome) else Outcome(APPLIED, answer)


def _known_exec(ctx: _Context, inv: _Invocation) -> Outcome:
    """`kubectl exec WORKLOAD [-c CONTAINER] -- COMMAND...` running a command whose effect is known (`execs`):
    the same words in the same container of the same workload (kubectl's default container when `-c` is
    left out: the pod's `kubectl.kubernetes.io/default-container`, else its first)."""
    args = inv.words[1:]
    kind_word, slash, name = args[0].partition("/") if args else ("", "", "")
    if slash and name:
        res = _resource(ctx, kind_word)
        obj = ctx.store.get(_key(res, inv.namespace, name))
        if obj is None:
            raise _not_found(res, name)
        container = inv.last("container")
        if container is None:
            template = (obj.get("spec") or {}).get("template") or {}
            annotations = (template.get("metadata") or {}).get("annotations") or {}
            containers = [c.get("name") for c in (template.get("spec") or {}).get("containers") or []]
            container = annotations.get("kubectl.kubernetes.io/default-container") or (containers[:1] or [None])[0]
        for index, step in enumerate(ctx.execs):
            workload = step.get("workload") or {}
            if (step.get("namespace"), workload.get("kind"), workload.get("name"), step.get("container"),
                    list(step.get("command") or ())) == (inv.namespace, res.kind, name, container, args[1:]):
                ctx.ran.append(index)
                return Outcome(APPLIED, f"ran `{' '.join(args[1:])[:80]}` in {res.ref(name)}, container {container}")
    raise _unsupported(f"`{inv.program} exec` {_UNSUPPORTED_VERBS['exec']}, and it is not the revert command of "
                       "the scenario's exec fault (the same command, in the same container of the same workload)")


def _scale(ctx: _Context, inv: _Invocation) -> str:
    """`kubectl scale`: the replica count, after the `--current-replicas` precondition holds."""
    wanted = _count(inv.last("replicas"), required=True)
    current = _count(inv.last("current-replicas"), required=False)
    messages = []
    for target, obj in _existing(ctx, _select(ctx, inv, inv.words[1:], verb="scale")):
        if target.res.kind not in _SCALABLE:
            raise _refused("Error from server (NotFound): the server could not find the requested resource")
        spec = _spec(obj)
        have = spec.get("replicas", 1)
        if current is not None and current != -1 and have != current:
            raise _refused(f"error: Expected replicas to be {current}, was {have}")
        new = copy.deepcopy(obj)
        _dict_at(new, "spec")["replicas"] = wanted
        changed = _update(ctx, target, obj, new)
        messages.append(f"{target.res.ref(target.name)} scaled" + ("" if changed else " (no change)"))
    return _joined(messages)


def _count(text: str | None, required: bool) -> int | None:
    """A `--replicas`/`--current-replicas` value, refused as kubectl refuses it."""
    if text is None:
        if required:
            raise _refused('error: required flag(s) "replicas" not set')
        return None
    try:
        value = int(text)
    except ValueError:
        raise _refused(f'error: invalid argument "{text}" for "--replicas" flag: strconv.ParseInt: parsing '
                       f'"{text}": invalid syntax') from None
    if value < 0 and required:
        raise _refused("error: The --replicas=COUNT flag is required, and COUNT must be greater than or equal to 0")
    return value


def _patch(ctx: _Context, inv: _Invocation) -> str:
    """`kubectl patch`: a strategic-merge (the default), merge (RFC 7386) or JSON (RFC 6902) patch."""
    if inv.last("subresource"):
        raise _unsupported("patching a subresource (`--subresource`) cannot be replayed")
    text = inv.last("patch")
    if text is None and inv.last("patch-file"):
        docs = _bundle_paths(ctx, inv.last("patch-file") or "")
        if not docs:
            raise _unsupported(f'the patch file "{inv.last("patch-file")}" is not a file of the compiled bundle')
        text = ctx.files[docs[0]].decode("utf-8", "replace")
    if not text:
        raise _refused("error: must specify --patch or --patch-file containing the contents of the patch")
    kind = (inv.last("type") or "strategic").lower()
    if kind not in ("strategic", "merge", "json"):
        raise _refused(f'error: --type must be one of [json merge strategic], not "{kind}"')
    patch = _parse_patch(text)
    messages = []
    for target, obj in _existing(ctx, _select(ctx, inv, inv.words[1:], verb="patch")):
        new = _patched(target.res, obj, patch, kind)
        _check_identity(target, new)
        changed = _update(ctx, target, obj, new)
        messages.append(f"{target.res.ref(target.name)} patched" + ("" if changed else " (no change)"))
    return _joined(messages)


def _parse_patch(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        pass
    docs = _yaml_documents(text, "the patch")
    if len(docs) != 1:
        raise _refused(f'error: unable to parse "{text}": the patch must be one JSON or YAML document')
    return docs[0]


def _patched(res: _Resource, obj: dict, patch: Any, kind: str) -> dict:
    """The object after a patch of the given type; custom resources take no strategic merge, as on a cluster."""
    if kind == "json":
        if not isinstance(patch, list):
            raise _refused("The request is invalid: the server rejected our request due to an error in our "
                           "request (a JSON patch is a list of operations)")
        return _json_patch(obj, patch)
    if not isinstance(patch, dict):
        raise _refused("The request is invalid: the server rejected our request due to an error in our "
                       "request (the patch is not an object)")
    if kind == "merge":
        return _merge_patch(obj, patch)
    if not res.builtin:
        raise _refused("Error from server (UnsupportedMediaType): the body of the request was in an unknown "
                       "format - accepted media types include: application/json-patch+json, "
                       "application/merge-patch+json, application/apply-patch+yaml")
    return _strategic_merge(obj, patch, res.kind)


def _check_identity(target: _Target, new: Any) -> None:
    """A patch cannot rename an object or move it to another namespace."""
    if not isinstance(new, dict):
        raise _refused("The request is invalid: the server rejected our request due to an error in our request")
    meta = new.get("metadata") if isinstance(new.get("metadata"), dict) else {}
    if meta.get("name") != target.name:
        raise _refused(f"Error from server (BadRequest): the name of the object ({meta.get('name')}) does not match "
                       f"the name on the URL ({target.name})")
    if target.res.namespaced and meta.get("namespace") not in (None, target.key[1]):
        raise _refused("Error from server (BadRequest): the namespace of the provided object does not match the "
                       "namespace sent on the request")


def _set(ctx: _Context, inv: _Invocation) -> str | Outcome:
    sub = inv.words[1] if len(inv.words) > 1 else ""
    handler = {"image": _set_image, "env": _set_env, "resources": _set_resources,
               "serviceaccount": _set_serviceaccount, "sa": _set_serviceaccount}.get(sub)
    if handler is None:
        raise _unsupported(f"`{inv.program} set {sub}` is not replayed" if sub else "`set` needs a subcommand")
    return handler(ctx, inv, inv.words[2:])


def _split_changes(args: list[str], what: str) -> tuple[list[str], list[str]]:
    """kubectl's split of `set env`/`label`/`annotate` arguments: objects first, then `K=V` and `K-`."""
    resources: list[str] = []
    changes: list[str] = []
    for arg in args:
        if "=" in arg or arg.endswith("-"):
            changes.append(arg)
        elif changes:
            raise _refused(f"error: all resources must be specified before {what} changes: {arg}")
        else:
            resources.append(arg)
    return resources, changes


def _pod_spec(target: _Target, obj: dict) -> dict:
    """The pod spec inside `obj` (a copy being edited), made if the type has one and it is missing."""
    path = _POD_SPEC_PATHS.get(target.res.kind)
    if path is None:
        raise _refused(f"error: {target.res.ref(target.name)} is not a pod and has no pod template")
    node = obj
    for step in path:
        node = _dict_at(node, step)
    return node


def _containers(spec: dict) -> list[dict]:
    out = []
    for field in ("initContainers", "containers"):
        value = spec.get(field)
        if isinstance(value, list):
            out += [c for c in value if isinstance(c, dict)]
    return out


def _set_image(ctx: _Context, inv: _Invocation, args: list[str]) -> str:
    """`kubectl set image`: CONTAINER=IMAGE for each container named (`*` for all of them)."""
    resources = [a for a in args if "=" not in a]
    images = [a.partition("=")[::2] for a in args if "=" in a]
    if not images:
        raise _refused("error: at least one image update is required")
    messages = []
    for target, obj in _existing(ctx, _select(ctx, inv, resources, verb="set")):
        new = copy.deepcopy(obj)
        containers = _containers(_pod_spec(target, new))
        for name, image in images:
            chosen = [c for c in containers if name == "*" or c.get("name") == name]
            if not chosen:
                raise _refused(f'error: unable to find container named "{name}"')
            for container in chosen:
                container["image"] = image
        changed = _update(ctx, target, obj, new)
        messages.append(f"{target.res.ref(target.name)} image updated" + ("" if changed else " (no change)"))
    return _joined(messages)


def _set_env(ctx: _Context, inv: _Invocation, args: list[str]) -> str | Outcome:
    """`kubectl set env`: K=V sets (in place, or appended), K- removes, in the containers chosen by -c."""
    if inv.last("from") is not None or inv.values("from-file", "from-env-file"):
        raise _unsupported("`kubectl set env --from` reads keys from another object, which is not replayed")
    if inv.enabled("list") or inv.enabled("resolve"):
        return Outcome(READ_ONLY, f"`{inv.text}` --list only reads, so it changes nothing")
    resources, changes = _split_changes(args, "environment")
    changes += inv.values("env")
    sets: list[tuple[str, str]] = []
    removals: list[str] = []
    for change in changes:
        if "=" in change:
            name, _, value = change.partition("=")
            if not name:
                raise _refused(f"error: invalid environment variable: {change}")
            sets.append((name, value))
        elif change.endswith("-") and len(change) > 1:
            removals.append(change[:-1])
        else:
            raise _refused(f"error: environment variables must be of the form key=value: {change}")
    if not sets and not removals:
        raise _refused("error: at least one environment variable must be provided")
    selector = inv.last("containers", "container") or "*"
    messages = []
    for target, obj in _existing(ctx, _select(ctx, inv, resources, verb="set")):
        new = copy.deepcopy(obj)
        chosen = [c for c in _containers(_pod_spec(target, new)) if fnmatch.fnmatchcase(str(c.get("name")), selector)]
        if not chosen:
            messages.append(f"warning: {target.res.kind}/{target.name} does not have any containers matching "
                            f'"{selector}"')
            continue
        for container in chosen:
            _edit_env(container, sets, removals)
        changed = _update(ctx, target, obj, new)
        messages.append(f"{target.res.ref(target.name)} env updated" + ("" if changed else " (no change)"))
    return _joined(messages)


def _edit_env(container: dict, sets: list[tuple[str, str]], removals: list[str]) -> None:
    """kubectl's env update: a variable keeps its place when set again (a `valueFrom` gives way to the value)."""
    env = [e for e in container.get("env") or [] if isinstance(e, dict)]
    for name, value in sets:
        entry = {"name": name, "value": value} if value != "" else {"name": name}  # the API drops an empty value
        for i, existing in enumerate(env):
            if existing.get("name") == name:
                env[i] = entry
                break
        else:
            env.append(entry)
    env = [e for e in env if e.get("name") not in removals]
    if env:
        container["env"] = env
    else:
        container.pop("env", None)


def _resource_list(text: str | None) -> dict[str, str]:
    """A `--limits`/`--requests` value (`cpu=200m,memory=512Mi`), its quantities checked as kubectl checks them."""
    if not text:
        return {}
    out = {}
    for part in text.split(","):
        name, eq, value = part.partition("=")
        if not eq or not name:
            raise _refused(f"error: invalid argument syntax {part}, expected <resource>=<value>")
        if _quantity(value) is None:
            raise _refused("error: quantities must match the regular expression "
                           "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'")
        out[name] = value
    return out


def _set_resources(ctx: _Context, inv: _Invocation, args: list[str]) -> str:
    """`kubectl set resources`: the limits and requests given, in the containers chosen by -c."""
    limits = _resource_list(inv.last("limits"))
    requests = _resource_list(inv.last("requests"))
    if not limits and not requests:
        raise _refused("error: you must specify an update to requests or limits (in the form of --requests/--limits)")
    selector = inv.last("containers", "container") or "*"
    messages = []
    for target, obj in _existing(ctx, _select(ctx, inv, args, verb="set")):
        new = copy.deepcopy(obj)
        chosen = [c for c in _containers(_pod_spec(target, new)) if fnmatch.fnmatchcase(str(c.get("name")), selector)]
        if not chosen:
            raise _refused(f"error: unable to find container named {selector}")
        for container in chosen:
            resources = _dict_at(container, "resources")
            if limits:
                _dict_at(resources, "limits").update(limits)
            if requests:
                _dict_at(resources, "requests").update(requests)
        changed = _update(ctx, target, obj, new)
        messages.append(f"{target.res.ref(target.name)} resource requirements updated"
                        + ("" if changed else " (no change)"))
    return _joined(messages)


def _set_serviceaccount(ctx: _Context, inv: _Invocation, args: list[str]) -> str:
    """`kubectl set serviceaccount`: the pod spec's serviceAccountName."""
    if len(args) < 2:
        raise _refused("error: serviceaccount is required")
    account = args[-1]
    messages = []
    for target, obj in _existing(ctx, _select(ctx, inv, args[:-1], verb="set")):
        new = copy.deepcopy(obj)
        _pod_spec(target, new)["serviceAccountName"] = account
        changed = _update(ctx, target, obj, new)
        messages.append(f"{target.res.ref(target.name)} serviceaccount updated" + ("" if changed else " (no change)"))
    return _joined(messages)


_ROLLOUT_KINDS = {"Deployment", "StatefulSet", "DaemonSet"}


def _rollout(ctx: _Context, inv: _Invocation) -> str:
    """`kubectl rollout undo|restart|pause|resume` on each object named."""
    sub = inv.words[1] if len(inv.words) > 1 else ""
    handler = {"undo": _rollout_undo, "restart": _rollout_restart,
               "pause": _rollout_pause, "resume": _rollout_pause}.get(sub)
    if handler is None:
        raise _unsupported(f"`{inv.program} rollout {sub}` is not replayed")
    messages = []
    for target, obj in _existing(ctx, _select(ctx, inv, inv.words[2:], verb="rollout")):
        messages.append(handler(ctx, inv, target, obj))
    return _joined(messages)


def _rollout_error(target: _Target, text: str) -> _Stop:
    return _refused(f'error: {target.res.noun} "{target.name}" {text}')


def _rollout_undo(ctx: _Context, inv: _Invocation, target: _Target, obj: dict) -> str:
    """`kubectl rollout undo`: the last earlier template that differs, or revision `--to-revision`."""
    if target.res.kind not in _ROLLOUT_KINDS:
        raise _refused(f'error: no rollbacker has been implemented for "{target.res.group}, Kind={target.res.kind}"')
    spec = _spec(obj)
    if spec.get("paused") is True:
        raise _refused(f"error: you cannot rollback a paused deployment; resume it first with 'kubectl rollout "
                       f"resume {target.res.ref(target.name)}' and try again")
    revisions = [t for t in ctx.history.get(target.key) or [] if isinstance(t, dict)]
    current = _template_identity(spec.get("template"))
    wanted = _count_flag(inv.last("to-revision"))
    if wanted:
        if wanted > len(revisions):
            raise _refused(f"error: unable to find specified revision {wanted} in history")
        chosen = revisions[wanted - 1]
        if _template_identity(chosen) == current:
            return (f"{target.res.ref(target.name)} skipped rollback "
                    f"(current template already matches revision {wanted})")
    else:
        earlier = [t for t in revisions if _template_identity(t) != current]
        if not earlier:
            if target.res.kind == "Deployment":
                raise _refused(f'error: no rollout history found for deployment "{target.name}"')
            raise _refused("error: no last revision to roll back to")
        chosen = earlier[-1]
    new = copy.deepcopy(obj)
    template = copy.deepcopy(chosen)
    labels = _labels(template)
    labels.pop("pod-template-hash", None)  # the ReplicaSet's label, not the workload's
    _dict_at(new, "spec")["template"] = template
    _update(ctx, target, obj, new)
    return f"{target.res.ref(target.name)} rolled back"


def _template_identity(template: Any) -> Any:
    """A pod template as a rollout compares it: without the ReplicaSet's pod-template-hash label."""
    template = copy.deepcopy(template) if isinstance(template, dict) else {}
    meta = template.get("metadata")
    if isinstance(meta, dict) and isinstance(meta.get("labels"), dict):
        meta["labels"].pop("pod-template-hash", None)
    return _pruned(template)


def _count_flag(text: str | None) -> int:
    if text is None:
        return 0
    try:
        value = int(text)
    except ValueError:
        raise _refused(f'error: invalid argument "{text}" for "--to-revision" flag') from None
    if value < 0:
        raise _refused(f"error: unable to find specified revision {value} in history")
    return value


def _rollout_restart(ctx: _Context, inv: _Invocation, target: _Target, obj: dict) -> str:
    """`kubectl rollout restart`: a restartedAt annotation on the pod template, so its pods are replaced."""
    if target.res.kind not in _ROLLOUT_KINDS:
        raise _rollout_error(target, "restarting is not supported")
    spec = _spec(obj)
    if target.res.kind == "Deployment" and spec.get("paused") is True:
        raise _rollout_error(target, "can't restart paused deployment (run rollout resume first)")
    new = copy.deepcopy(obj)
    template = _dict_at(_dict_at(new, "spec"), "template")
    _dict_at(_dict_at(template, "metadata"), "annotations")[RESTARTED_AT_ANNOTATION] = RESTARTED_AT
    _update(ctx, target, obj, new)
    return f"{target.res.ref(target.name)} restarted"


def _rollout_pause(ctx: _Context, inv: _Invocation, target: _Target, obj: dict) -> str:
    """`kubectl rollout pause|resume`: a Deployment's spec.paused."""
    pause = inv.words[1] == "pause"
    if target.res.kind != "Deployment":
        raise _rollout_error(target, "pausing is not supported" if pause else "resuming is not supported")
    spec = _spec(obj)
    if bool(spec.get("paused")) == pause:
        raise _rollout_error(target, "is already paused" if pause else "is not paused")
    new = copy.deepcopy(obj)
    if pause:
        _dict_at(new, "spec")["paused"] = True
    else:
        _dict_at(new, "spec").pop("paused", None)  # false is the default, and the API drops it
    _update(ctx, target, obj, new)
    return f"{target.res.ref(target.name)} {'paused' if pause else 'resumed'}"


def _delete(ctx: _Context, inv: _Invocation) -> str:
    """`kubectl delete`: the objects named; a namespace takes everything in it along."""
    ignore_missing = inv.enabled("ignore-not-found")
    targets = _select(ctx, inv, inv.words[1:], verb="delete")
    messages = []
    for target in targets:
        if ctx.store.get(target.key) is None:
            if ignore_missing:
                continue
            raise _not_found(target.res, target.name, _when(target, "deleting"))
        ctx.store.delete(target.key)
        if target.res.kind == "Namespace":
            for key in ctx.store.keys():
                if key[1] == target.name:
                    ctx.store.delete(key)
        messages.append(f'{target.res.kind.lower()}{"." + target.res.group if target.res.group else ""} '
                        f'"{target.name}" deleted')
    return _joined(messages) if messages else "No resources found"


_LABEL_NAME = re.compile(r"([A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)")


_LABEL_VALUE = re.compile(r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?")


_DNS_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")


def _label(ctx: _Context, inv: _Invocation) -> str | Outcome:
    return _metadata_map(ctx, inv, "labels")


def _annotate(ctx: _Context, inv: _Invocation) -> str | Outcome:
    return _metadata_map(ctx, inv, "annotations")


def _metadata_map(ctx: _Context, inv: _Invocation, field: str) -> str | Outcome:
    """`kubectl label|annotate`: k=v sets (refused over another value without --overwrite), k- removes."""
    what = "label" if field == "labels" else "annotation"
    if inv.enabled("list"):
        return Outcome(READ_ONLY, f"`{inv.text}` --list only reads, so it changes nothing")
    resources, changes = _split_changes(inv.words[1:], what)
    if not changes:
        raise _refused(f"error: at least one {what} update is required")
    sets, removals = {}, []
    for change in changes:
        if "=" in change:
            key, _, value = change.partition("=")
            _check_metadata_key(key, what)
            if field == "labels" and not (len(value) <= 63 and _LABEL_VALUE.fullmatch(value)):
                raise _refused(f'error: invalid label value: "{change}": a valid label must be an empty string or '
                               "consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
                               "alphanumeric character")
            sets[key] = value
        else:
            key = change[:-1]
            _check_metadata_key(key, what)
            removals.append(key)
    overwrite = inv.enabled("overwrite")
    messages = []
    for target, obj in _existing(ctx, _select(ctx, inv, resources, verb=what)):
        new = copy.deepcopy(obj)
        meta = _dict_at(new, "metadata")
        current = meta.get(field) if isinstance(meta.get(field), dict) else {}
        for key, value in sets.items():
            if key in current and current[key] != value and not overwrite:
                raise _refused(f"error: '{key}' already has a value ({current[key]}), and --overwrite is false")
        updated = {k: v for k, v in current.items() if k not in removals}
        updated.update(sets)
        if updated:
            meta[field] = updated
        else:
            meta.pop(field, None)
        changed = _update(ctx, target, obj, new)
        if field == "annotations":  # kubectl says "annotated" whatever happened
            verb = "annotated" if changed else "annotated (no change)"
        else:
            verb = "labeled" if changed and len(updated) >= len(current) else "unlabeled" if changed else "not labeled"
        messages.append(f"{target.res.ref(target.name)} {verb}")
    return _joined(messages)


def _check_metadata_key(key: str, what: str) -> None:
    prefix, slash, name = key.rpartition("/")
    valid_prefix = not slash or (len(prefix) <= 253 and bool(_DNS_SUBDOMAIN.fullmatch(prefix)))
    if not (len(name) <= 63 and _LABEL_NAME.fullmatch(name) and valid_prefix):
        raise _refused(f'error: invalid {what} spec: "{key}": a valid name must consist of alphanumeric characters, '
                       "'-', '_' or '.', and must start and end with an alphanumeric character, with an optional "
                       "DNS subdomain prefix and '/'")


def _cordon(ctx: _Context, inv: _Invocation) -> str:
    return _schedulable(ctx, inv, cordon=True)


def _uncordon(ctx: _Context, inv: _Invocation) -> str:
    return _schedulable(ctx, inv, cordon=False)


def _schedulable(ctx: _Context, inv: _Invocation, cordon: bool) -> str:
    """`kubectl cordon|uncordon`: a node's spec.unschedulable."""
    args = inv.words[1:]
    if not args and inv.last("selector") is None:
        raise _refused(f"error: USAGE: {'cordon' if cordon else 'uncordon'} NODE [flags]")
    names = args if args and all("/" in a for a in args) else ["node", *args]
    messages = []
    for target, obj in _existing(ctx, _select(ctx, inv, names, verb="cordon")):
        if target.res.kind != "Node":
            raise _refused(f"error: {target.res.ref(target.name)} is not a node")
        new = copy.deepcopy(obj)
        if cordon:
            _dict_at(new, "spec")["unschedulable"] = True
        else:
            _dict_at(new, "spec").pop("unschedulable", None)
        changed = _update(ctx, target, obj, new)
        word = "cordoned" if cordon else "uncordoned"
        messages.append(f"{target.res.ref(target.name)} {word if changed else 'already ' + word}")
    return _joined(messages)


_TAINT_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")


def _taint(ctx: _Context, inv: _Invocation) -> str:
    """`kubectl taint nodes NODE key=value:Effect ... key:Effect- key-`."""
    args = inv.words[1:]
    if not args:
        raise _refused("error: at least one taint update is required")
    if "/" in args[0] or inv.last("selector") is not None or inv.enabled("all"):
        resources, specs = args[:1], args[1:]
    else:
        resources, specs = args[:2], args[2:]
    if not specs:
        raise _refused("error: at least one taint update is required")
    adds, removals = [], []
    for spec in specs:
        if spec.endswith("-"):
            key, _, effect = spec[:-1].partition(":")
            removals.append((key.partition("=")[0], effect))
            continue
        body, colon, effect = spec.rpartition(":")
        key, _, value = body.partition("=")
        if not colon or not key:
            raise _refused(f"error: invalid taint spec: {spec}, the taint must be key=value:effect or key:effect")
        if effect not in _TAINT_EFFECTS:
            raise _refused(f"error: invalid taint effect: {effect}, unsupported taint effect")
        adds.append({"key": key, **({"value": value} if value else {}), "effect": effect})
    overwrite = inv.enabled("overwrite")
    messages = []
    for target, obj in _existing(ctx, _select(ctx, inv, resources, verb="taint")):
        if target.res.kind != "Node":
            raise _refused(f'error: resource type "{target.res.plural}" is not supported by taint')
        new = copy.deepcopy(obj)
        spec = _dict_at(new, "spec")
        taints = [t for t in spec.get("taints") or [] if isinstance(t, dict)]
        for key, effect in removals:
            kept = [t for t in taints if not (t.get("key") == key and (not effect or t.get("effect") == effect))]
            if len(kept) == len(taints):
                raise _refused(f'error: taint "{key}{":" + effect if effect else ""}" not found')
            taints = kept
        for taint in adds:
            same = [i for i, t in enumerate(taints)
                    if t.get("key") == taint["key"] and t.get("effect") == taint["effect"]]
            if same and not overwrite:
                raise _refused(f"error: Node {target.name} already has {taint['key']} taint(s) with same effect(s) "
                               "and --overwrite is false")
            taints = [t for i, t in enumerate(taints) if i not in same] + [taint]
        if taints:
            spec["taints"] = taints
        else:
            spec.pop("taints", None)
        _update(ctx, target, obj, new)
        word = "tainted" if adds and not removals else "untainted" if removals and not adds else "modified"
        messages.append(f"{target.res.ref(target.name)} {word}")
    return _joined(messages)


def _apply(ctx: _Context, inv: _Invocation) -> str:
    """`kubectl apply -f`: each manifest merged over the live object, or created.

    The merge is the patch kubectl sends: the manifest's fields over the live ones (strategic
    merge for Kubernetes' types, JSON merge for custom resources), so fields the manifest leaves
    out stay as they are. When the live object carries kubectl's last-applied-configuration
    annotation, the fields that configuration had and the manifest dropped are removed too, as
    kubectl's three-way merge does; the annotation is then updated (it is not added to an object
    that lacks it, to keep replayed manifests as the caller's).
    """
    if inv.enabled("prune"):
        raise _unsupported("`kubectl apply --prune` deletes objects the files do not mention, which is not replayed")
    if not inv.values("filename"):
        raise _refused("error: must specify one of -f and -k")
    server_side = inv.enabled("server-side")
    messages = []
    for source, manifest in _manifests(ctx, inv):
        res, key, manifest = _identify(ctx, inv, manifest)
        target = _Target(res, key, source)
        live = ctx.store.get(key)
        if live is None:
            _create_object(ctx, target, manifest)
            messages.append(f"{res.ref(key[2])} {'serverside-applied' if server_side else 'created'}")
            continue
        new = _applied(res, live, manifest)
        changed = _update(ctx, target, live, new)
        word = "serverside-applied" if server_side else "configured" if changed else "unchanged"
        messages.append(f"{res.ref(key[2])} {word}")
    return _joined(messages)


def _applied(res: _Resource, live: dict, manifest: dict) -> dict:
    """The object `kubectl apply` makes of a live one and a manifest (see `_apply`)."""
    merge: Callable[[dict, dict], dict] = (
        (lambda a, b: _strategic_merge(a, b, res.kind)) if res.builtin else _merge_patch)
    new = merge(live, _without_nulls(manifest))
    last_text = _dig(live, "metadata", "annotations", LAST_APPLIED_ANNOTATION)
    if isinstance(last_text, str):
        try:
            last = json.loads(last_text)
        except ValueError:
            last = None
        if isinstance(last, dict):
            new = merge(new, _removals(last, manifest, res))
        record = copy.deepcopy(manifest)
        recorded = _dig(record, "metadata", "annotations")
        if isinstance(recorded, dict):
            recorded.pop(LAST_APPLIED_ANNOTATION, None)
        _dict_at(_dict_at(new, "metadata"), "annotations")[LAST_APPLIED_ANNOTATION] = (
            json.dumps(record, separators=(",", ":"), sort_keys=True) + "\n")
    return new


def _without_nulls(value: Any) -> Any:
    """A manifest as kubectl reads it: a key set to null is a key not set."""
    if isinstance(value, dict):
        return {k: _without_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_without_nulls(v) for v in value]
    return value


def _removals(last: dict, manifest: dict, res: _Resource, path: tuple[str, ...] = ()) -> dict:
    """The patch that deletes what the last applied configuration had and the manifest dropped."""
    patch: dict = {}
    for key, old in last.items():
        if key not in manifest or manifest[key] is None:
            patch[key] = None
            continue
        new = manifest[key]
        if isinstance(old, dict) and isinstance(new, dict):
            sub = _removals(old, new, res, path + (key,))
            if sub:
                patch[key] = sub
        elif isinstance(old, list) and isinstance(new, list) and res.builtin:
            merge_key = _merge_key(res.kind, path + (key,))
            if merge_key is None:
                continue
            entries = []
            for item in old:
                if not isinstance(item, dict) or merge_key not in item:
                    continue
                kept = [n for n in new if isinstance(n, dict) and n.get(merge_key) == item[merge_key]]
                if not kept:
                    entries.append({merge_key: item[merge_key], "$patch": "delete"})
                else:
                    sub = _removals(item, kept[0], res, path + (key,))
                    if sub:
                        entries.append({merge_key: item[merge_key], **sub})
            if entries:
                patch[key] = entries
    return patch


def _create(ctx: _Context, inv: _Invocation) -> str:
    """`kubectl create -f` (refused over an existing object), or a generator: secret, configmap, namespace."""
    if len(inv.words) > 1:
        manifest = _generated(ctx, inv)
        res, key, manifest = _identify(ctx, inv, manifest)
        if ctx.store.get(key) is not None:
            raise _refused(f'Error from server (AlreadyExists): {res.noun} "{key[2]}" already exists')
        _create_object(ctx, _Target(res, key), manifest)
        return f"{res.ref(key[2])} created"
    if not inv.values("filename"):
        raise _refused("error: must specify one of -f and -k")
    messages = []
    for source, manifest in _manifests(ctx, inv):
        res, key, manifest = _identify(ctx, inv, manifest)
        if ctx.store.get(key) is not None:
            raise _refused(f'Error from server (AlreadyExists): error when creating "{source}": {res.noun} '
                           f'"{key[2]}" already exists')
        _create_object(ctx, _Target(res, key, source), manifest)
        messages.append(f"{res.ref(key[2])} created")
    return _joined(messages)


def _generated(ctx: _Context, inv: _Invocation) -> dict:
    """The object a `kubectl create <generator>` command makes."""
    what = inv.words[1].lower() if len(inv.words) > 1 else ""
    args = inv.words[2:]
    if what == "secret":
        if not args or args[0] != "generic":
            raise _unsupported(f"`{inv.program} create secret {args[0] if args else ''}` is not replayed; "
                               "use `create secret generic`")
        args = args[1:]
    if what not in ("secret", "configmap", "cm", "namespace", "ns", "serviceaccount", "sa"):
        raise _unsupported(f"`{inv.program} create {what}` is not replayed")
    if len(args) != 1:
        raise _refused(f"error: exactly one NAME is required, got {len(args)}")
    name = args[0]
    meta: dict = {"name": name}
    if what in ("namespace", "ns"):
        return {"apiVersion": "v1", "kind": "Namespace", "metadata": meta}
    meta["namespace"] = inv.namespace
    if what in ("serviceaccount", "sa"):
        return {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": meta}
    data = _literal_data(ctx, inv)
    if what == "secret":
        encoded = {k: base64.b64encode(v.encode("utf-8")).decode("ascii") for k, v in data.items()}
        secret = {"apiVersion": "v1", "kind": "Secret", "metadata": meta}
        if encoded:
            secret["data"] = encoded
        secret["type"] = inv.last("type") or "Opaque"
        return secret
    configmap = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta}
    if data:
        configmap["data"] = data
    return configmap


def _literal_data(ctx: _Context, inv: _Invocation) -> dict[str, str]:
    """A generator's data, sorted by key as kubectl writes it.

    `--from-literal=k=v` gives a key; `--from-file` too, for files of the bundle.
    """
    if inv.values("from-env-file"):
        raise _unsupported("`--from-env-file` is not replayed")
    data: dict[str, str] = {}
    for literal in inv.values("from-literal"):
        key, eq, value = literal.partition("=")
        if not eq or not key:
            raise _refused(f"error: invalid literal source {literal}, expected key=value")
        data[key] = value
    for source in inv.values("from-file"):
        key, eq, path = source.partition("=")
        if not eq:
            key, path = source.rsplit("/", 1)[-1], source
        found = _bundle_paths(ctx, path)
        if len(found) != 1:
            raise _unsupported(f'the path "{path}" is not a file of the compiled bundle, so what it contains '
                               "is unknown")
        data[key] = ctx.files[found[0]].decode("utf-8", "replace")
    return dict(sorted(data.items()))


def _replace(ctx: _Context, inv: _Invocation) -> str:
    """`kubectl replace -f`: the manifest becomes the object (refused if it is missing); `--force` recreates."""
    if not inv.values("filename"):
        raise _refused("error: must specify --filename to replace")
    force = inv.enabled("force")
    messages = []
    for source, manifest in _manifests(ctx, inv):
        res, key, manifest = _identify(ctx, inv, manifest)
        target = _Target(res, key, source)
        live = ctx.store.get(key)
        if live is None:
            raise _not_found(res, key[2], _when(target, "replacing"))
        if force:
            ctx.store.delete(key)
            _create_object(ctx, target, manifest)
        else:
            _update(ctx, target, live, copy.deepcopy(manifest))
        messages.append(f"{res.ref(key[2])} replaced")
    return _joined(messages)


_HANDLERS: dict[str, Callable[[_Context, _Invocation], str | Outcome]] = {
    "scale": _scale, "patch": _patch, "set": _set, "rollout": _rollout, "delete": _delete, "label": _label,
    "annotate": _annotate, "apply": _apply, "create": _create, "replace": _replace, "cordon": _cordon,
    "uncordon": _uncordon, "taint": _taint,
}


def _joined(messages: list[str]) -> str:
    return "; ".join(messages) if messages else "No resources found"
