"""Storage in topologies: storage classes, persistent volumes and claims, emitted and checked by reference."""

from __future__ import annotations

import yaml

from itbench_dsl.compiler import compile_source
from itbench_dsl.diagnostics import Diagnostics
from itbench_dsl.topology import CLUSTER_STORAGE_CLASSES

HEAD = '''scenario "storage" {
  domain sre
  complexity low
  description "A database whose volume claim is checked by reference."
  topology {
    namespace "shop"
'''
TAIL = '''    deployment "db" {
      image = "mongo:4.4.6"
      port "mongo" = 27017
      mount "data" = "/data/db"
      volume "data" { claim = "CLAIM" }
    }
  }
  fault nonexistent_image on deployment "db"
  expect { root_cause deployment "db" }
}
'''


def _compile(objects: str, claim: str = "db-pvc"):
    diags = Diagnostics()
    source = HEAD + objects + TAIL.replace("CLAIM", claim)
    result = compile_source(source.encode(), "storage.itb", diags)
    return result, diags, source


def _line(source: str, text: str) -> int:
    return next(i for i, line in enumerate(source.splitlines(), 1) if text in line)


STORAGE = '''    storageclass "fast" {
      provisioner = "rancher.io/local-path"
      reclaim_policy = "Delete"
      volume_binding_mode = "WaitForFirstConsumer"
    }
    persistentvolume "db-pv" {
      capacity = 2Gi
      storage_class = "db-storage"
      host_path = "/data/volumes/db"
      host_path_type = "DirectoryOrCreate"
      reclaim_policy = "Retain"
    }
    persistentvolumeclaim "db-pvc" {
      storage = 1Gi
      storage_class = "db-storage"
      volume_name = "db-pv"
    }
    persistentvolumeclaim "cache" {
      storage = 1Gi
      storage_class = "fast"
    }
'''


def test_storage_objects_are_emitted_and_validate():
    result, diags, _ = _compile(STORAGE)
    assert not diags.has_errors, [d.message for d in diags.items]
    documents = list(yaml.safe_load_all(result.files["manifests/topology.yaml"]))
    kinds = [d["kind"] for d in documents]
    # storage comes before the workloads that mount it
    assert kinds.index("StorageClass") < kinds.index("PersistentVolume") < kinds.index("PersistentVolumeClaim") \
        < kinds.index("Deployment")
    by_name = {(d["kind"], d["metadata"]["name"]): d for d in documents}
    sc = by_name[("StorageClass", "fast")]
    assert sc["apiVersion"] == "storage.k8s.io/v1" and sc["volumeBindingMode"] == "WaitForFirstConsumer"
    assert "namespace" not in sc["metadata"]
    pv = by_name[("PersistentVolume", "db-pv")]
    assert "namespace" not in pv["metadata"]
    assert pv["spec"]["hostPath"] == {"path": "/data/volumes/db", "type": "DirectoryOrCreate"}
    assert pv["spec"]["capacity"] == {"storage": "2Gi"} and pv["spec"]["persistentVolumeReclaimPolicy"] == "Retain"
    pvc = by_name[("PersistentVolumeClaim", "db-pvc")]
    assert pvc["metadata"]["namespace"] == "shop"
    assert pvc["spec"]["volumeName"] == "db-pv" and pvc["spec"]["resources"] == {"requests": {"storage": "1Gi"}}
    deployment = by_name[("Deployment", "db")]
    assert deployment["spec"]["template"]["spec"]["volumes"] == [
        {"name": "data", "persistentVolumeClaim": {"claimName": "db-pvc"}}]


def test_a_volume_naming_an_undeclared_claim_is_located():
    result, diags, source = _compile(STORAGE, claim="db-pvcc")
    errors = [d for d in diags.errors() if d.code == "E2003"]
    assert len(errors) == 1 and not result.files
    assert "db-pvcc" in errors[0].message and errors[0].span.line == _line(source, 'claim = "db-pvcc"')
    assert "db-pvc" in errors[0].help


def test_an_unknown_storage_class_is_located_and_cluster_classes_are_known():
    objects = STORAGE.replace('storage_class = "fast"', 'storage_class = "fastt"')
    _, diags, source = _compile(objects)
    errors = [d for d in diags.errors() if d.code == "E2003"]
    assert len(errors) == 1 and "fastt" in errors[0].message
    assert errors[0].span.line == _line(source, '"fastt"') and "fast" in errors[0].help
    # the cluster's own classes, and the class of a declared volume (static binding), need no StorageClass
    for name in (*CLUSTER_STORAGE_CLASSES, "db-storage"):
        _, diags, _ = _compile(STORAGE.replace('storage_class = "fast"', f'storage_class = "{name}"'))
        assert not diags.has_errors, (name, [d.message for d in diags.items])


def test_an_unknown_volume_name_and_a_volume_that_cannot_bind():
    _, diags, source = _compile(STORAGE.replace('volume_name = "db-pv"', 'volume_name = "db-pvx"'))
    errors = diags.errors()
    assert [d.code for d in errors] == ["E2003"] and errors[0].span.line == _line(source, '"db-pvx"')
    for change, words in (('storage = 1Gi\n      storage_class = "db-storage"', "holds 2Gi"),
                          ('storage_class = "db-storage"\n      volume_name', "storage class")):
        objects = STORAGE.replace("storage = 1Gi\n      storage_class = \"db-storage\"",
                                  "storage = 4Gi\n      storage_class = \"db-storage\"") if "holds" in words else \
            STORAGE.replace('storage_class = "db-storage"\n      volume_name',
                            'storage_class = "fast"\n      volume_name')
        _, diags, _ = _compile(objects)
        assert [d.code for d in diags.errors()] == ["E2034"], [d.message for d in diags.items]
        assert words in diags.errors()[0].message


def test_cluster_scoped_kinds_take_no_namespace():
    objects = STORAGE.replace('provisioner = "rancher.io/local-path"',
                              'provisioner = "rancher.io/local-path"\n      namespace = "shop"')
    _, diags, _ = _compile(objects)
    assert [d.code for d in diags.errors()] == ["E2006"] and "cluster-scoped" in diags.errors()[0].message


def test_the_claim_a_fault_creates_still_resolves_before_a_declared_one():
    # `persistentvolumeclaim "x"` names the topology's claim when no fault creates one of that name
    source = HEAD + STORAGE + TAIL.replace("CLAIM", "db-pvc").replace(
        'expect { root_cause deployment "db" }', 'expect { root_cause persistentvolumeclaim "db-pvc" }')
    diags = Diagnostics()
    result = compile_source(source.encode(), "storage.itb", diags)
    assert not diags.has_errors, [d.message for d in diags.items]
    assert result.scenario.root_causes[0].kind == "PersistentVolumeClaim"
