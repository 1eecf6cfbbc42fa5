import time, yaml, json, sys
from itbench_dsl import validate as V
import fastjsonschema
docs = [d for d in yaml.safe_load_all(open('/work/shared/reference/apps/opentelemetry-demo.yaml')) if d]
dep = [d for d in docs if d['kind'] == 'Deployment'][5]
def key(d): return f"{d['apiVersion']}/{d['kind']}"
def per(fn, n):
    t = time.perf_counter()
    for _ in range(n): fn()
    return (time.perf_counter() - t) / n * 1000
k = V._bundle(0)
# fastjsonschema: compile cost per kind, then warm
t = time.perf_counter(); fdep = fastjsonschema.compile({**k['kinds']['apps/v1/Deployment'], '$defs': k['$defs']}); c_dep = (time.perf_counter()-t)*1000
fs = {}
t = time.perf_counter()
for d in docs:
    if key(d) not in fs: fs[key(d)] = fastjsonschema.compile({**k['kinds'][key(d)], '$defs': k['$defs']})
    fs[key(d)](d)
fast_first = (time.perf_counter()-t)*1000
fast_dep = per(lambda: fdep(dep), 1000)
fast_scen = per(lambda: [fs[key(d)](d) for d in docs], 50)
js = V._validator('apps/v1/Deployment')
from jsonschema import Draft202012Validator
jsref = Draft202012Validator({**k['kinds']['apps/v1/Deployment'], '$defs': k['$defs']})
print(f"Deployment x1000: jsonschema $ref-resolving {per(lambda: list(jsref.iter_errors(dep)),1000):.3f} ms, jsonschema refs-inlined {per(lambda: list(js.iter_errors(dep)),1000):.3f} ms, fastjsonschema {fast_dep:.3f} ms (compile {c_dep:.0f} ms)")
def nomemo(): V._MEMO.clear(); V.validate_object(dep)
print(f"validate_object(Deployment) x1000: cold {per(nomemo,1000):.3f} ms, memo hit {per(lambda: V.validate_object(dep), 10000):.4f} ms")
def scen():
    V._MEMO.clear()
    for d in docs: V.validate_object(d)
def scen_hit():
    for d in docs: V.validate_object(d)
print(f"otel-demo 84 objects: validate_object cold {per(scen, 30):.1f} ms, memo hits {per(scen_hit, 100):.1f} ms; fastjsonschema warm schema-only {fast_scen:.1f} ms, fastjsonschema first use incl. compile {fast_first:.0f} ms")
