import time, yaml, copy, sys, json
t0 = time.perf_counter()
from itbench_dsl import validate as V
t_import = time.perf_counter() - t0
docs = [d for d in yaml.safe_load_all(open('/work/shared/reference/apps/opentelemetry-demo.yaml')) if d]
dep = [d for d in docs if d['kind'] == 'Deployment'][5]
print(f"import: {t_import*1000:.1f} ms; Deployment JSON {len(json.dumps(dep))} bytes; {len(docs)} otel objects")
t = time.perf_counter(); V._bundle(0); V._bundle(1); print(f"load both schema files: {(time.perf_counter()-t)*1000:.1f} ms")
t = time.perf_counter()
for d in docs: V.validate_object(d)
print(f"otel-demo 84 objects, first time (validator builds incl.): {(time.perf_counter()-t)*1000:.1f} ms")
def timeit(label, fn, n=1000):
    t = time.perf_counter()
    for _ in range(n): fn()
    dt = (time.perf_counter()-t)/n*1000
    print(f"{label}: {dt:.4f} ms/call ({n} calls)")
    return dt
v = V._validator('apps/v1/Deployment')
timeit("jsonschema iter_errors only, Deployment", lambda: list(v.iter_errors(dep)))
timeit("own rules only, Deployment", lambda: list(V._rule_issues('apps/v1/Deployment', dep)))
timeit("canonical JSON + blake2b, Deployment", lambda: V.hashlib.blake2b(json.dumps(dep, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode(), digest_size=16).digest())
def nomemo():
    V._MEMO.clear(); V.validate_object(dep)
timeit("validate_object, Deployment, memo cleared each call", nomemo)
timeit("validate_object, Deployment, memo hit", lambda: V.validate_object(dep), 10000)
def scen():
    V._MEMO.clear()
    for d in docs: V.validate_object(d)
timeit("otel-demo 84 objects, memo cleared (per scenario)", scen, 50)
def scen2():
    for d in docs: V.validate_object(d)
timeit("otel-demo 84 objects, all memo hits (per scenario)", scen2, 200)
