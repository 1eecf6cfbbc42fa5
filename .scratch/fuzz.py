import random, copy, sys, traceback
sys.path.insert(0, 'tests')
from test_validate import VALID
from itbench_dsl.validate import validate_object
JUNK = [None, 0, -1, 70000, 1.5, True, "", "X Y", "-", "a" * 300, [], {}, [None], {"": None}, {1: 2}, {None: "x"}, {True: []}, [{"name": 3}], {"matchLabels": 5}]
def nodes(obj, path=()):
    yield path
    if isinstance(obj, dict):
        for k, v in obj.items(): yield from nodes(v, path + (k,))
    elif isinstance(obj, list):
        for i, v in enumerate(obj): yield from nodes(v, path + (i,))
rng = random.Random(int(sys.argv[1]) if len(sys.argv) > 1 else 0)
n = 0
for key, doc in sorted(VALID.items()):
    paths = list(nodes(doc))[1:]
    for _ in range(int(sys.argv[2]) if len(sys.argv) > 2 else 200):
        obj = copy.deepcopy(doc)
        for _ in range(rng.randint(1, 3)):
            p = rng.choice(paths)
            target = obj
            try:
                for part in p[:-1]: target = target[part]
                target[p[-1]] = copy.deepcopy(rng.choice(JUNK))
            except (KeyError, IndexError, TypeError):
                pass
        try:
            r = validate_object(obj)
            n += 1
        except Exception:
            print(key, obj); traceback.print_exc(); sys.exit(1)
print("ok", n)
