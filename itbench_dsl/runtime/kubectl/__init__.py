"""Replaying a solution's shell commands on a scenario's state, standard library only.

A scenario's solution is a list of steps, some with a shell command such as
`kubectl -n shop rollout undo deployment/cart`. To check that a declared solution really fixes
its scenario, each command is replayed on the faulty state (Kubernetes manifests as plain
dicts, keyed by kind, namespace and name) the way a cluster would carry it out:

* kubectl's part: the shell line is cut into commands (`&&`, `;`, pipes), each command's
  objects are found from the forms kubectl accepts (`deploy/x`, `deployment x`,
  `deployments.apps x`, `-l app=x`, `-f FILE`), and the verb becomes the change kubectl sends
  (a strategic-merge, merge or JSON patch, a replacement, a deletion);
* the API server's part: the change is merged as the server merges it, fields the server owns
  (status, uid, a Service's cluster IP) are kept, and the update is validated against the rules
  that refuse it on a real cluster (immutable fields, selectors, requests above limits), with
  the message the server answers.

Every command ends in an `Outcome`: "applied" (the command succeeded; the objects changed, or
it had nothing to change), "read-only" (it only reads), "refused" (kubectl or the API server
would answer an error, and the message is theirs) or "unsupported" (it cannot be replayed
faithfully: an interactive editor, a shell construct, a file that is not in the bundle).
`objects` is changed only when the outcome is "applied": a line that fails halfway leaves the
caller's state as it was, so the caller never has to undo anything.

Pods' status is not derived here: a changed manifest is the whole result, and the caller works
out what the pods do. Nothing from the rest of the package is imported, apart from the runtime's
YAML reader (miniyaml.py, itself standard library only), loaded when a YAML file or patch is read.

The modules, each importing only those above it:

    state.py       the outcomes (`Outcome`, APPLIED, READ_ONLY, REFUSED, UNSUPPORTED), the objects a line
                   changes (kept aside until it applies) and the context a command runs in
    command.py     one kubectl command's words and flags; dry runs; read-only and unsupported verbs
    resources.py   resource types as kubectl resolves them, objects' keys
    files.py       `-f FILE`: the bundle's files and the objects they describe
    targets.py     which objects a command names (names, selectors, `--all`, files)
    server.py      the API server's write path: merging, server-owned fields, validation
    patches.py     strategic merge, JSON merge and JSON patches
    verbs.py       each verb as the change it sends, and the dispatch of a command to its verb
    shell.py       the shell line cut into commands, pipes and here-documents
    replay.py      `replay`: one line on a scenario's objects, applied whole or not at all
"""
