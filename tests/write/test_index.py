from __future__ import annotations

import numpy as np
import pyarrow as pa

from hudi_engine.write.index import KeySet, bucket_file_id, bucket_ids, bucket_of_file_id, held, java_string_hashes


def java_hash(s: str) -> int:
    h = 0
    units = s.encode("utf-16-be")
    for j in range(0, len(units), 2):
        h = (31 * h + (units[j] << 8 | units[j + 1])) & 0xFFFFFFFF
    return h


def test_java_string_hash_known_values():
    # Values of "abc".hashCode() etc. in Java, as unsigned 32-bit.
    got = java_string_hashes(pa.array(["", "a", "abc", "hello world", "id:1,name:Alice"]))
    assert list(got) == [0, 97, 96354, 1794106052, java_hash("id:1,name:Alice")]


def test_java_string_hash_matches_reference_on_random_and_unicode_keys():
    rnd = np.random.default_rng(7)
    keys = ["".join(chr(c) for c in rnd.integers(32, 127, size=rnd.integers(0, 40))) for _ in range(2000)]
    keys += ["é", "日本語キー", "😀x", "a" * 300]
    arr = pa.array(keys)
    assert list(java_string_hashes(arr)) == [java_hash(k) for k in keys]
    assert list(java_string_hashes(arr.slice(5, 10))) == [java_hash(k) for k in keys[5:15]]


def test_bucket_ids_follow_java_list_hash():
    keys = pa.array(["k1", "k2", "uuid-123"])
    expected = [((31 + java_hash(k)) & 0xFFFFFFFF & 0x7FFFFFFF) % 8 for k in keys.to_pylist()]
    assert list(bucket_ids(keys, 8)) == expected
    complex_keys = pa.array(["id:1,name:a", "id:2,name:b"])
    exp = []
    for k in complex_keys.to_pylist():
        h = 1
        for part in k.split(","):
            h = (31 * h + java_hash(part.split(":", 1)[1])) & 0xFFFFFFFF
        exp.append((h & 0x7FFFFFFF) % 16)
    assert list(bucket_ids(complex_keys, 16, 2)) == exp


def test_bucket_file_ids():
    f = bucket_file_id(42)
    assert f.startswith("00000042") and f.endswith("-0") and bucket_of_file_id(f) == 42
    assert bucket_of_file_id("d0304c53-6fd2-4b7a-a9d6-5ff632f79224-0") is None


def test_locate_finds_the_owner_of_each_key():
    from hudi_engine.write.index import locate

    stored = [(4, pa.array(["a", "b"])), (9, pa.array(["c"])), (2, pa.array([], pa.string()))]
    got = locate(pa.chunked_array([["c", "x", "a"], ["b"]]), stored)
    assert got.tolist() == [9, -1, 4, 4]
    assert locate(pa.array(["a"]), []).tolist() == [-1]
    # Fewer distinct batch keys than stored ones (the batch side is hashed), and a batch with a duplicate.
    many = [(1, pa.array([f"k{i}" for i in range(50)])), (2, pa.array([f"m{i}" for i in range(50)]))]
    assert locate(pa.array(["m7", "zz", "k3"]), many).tolist() == [2, -1, 1]
    assert locate(pa.array(["m7", "m7"]), many).tolist() == [2, 2]


def test_may_contain_any_checks_the_key_range_then_the_bloom_filter():
    from hudi_engine.io.base_file import BaseFileFooter
    from hudi_engine.io.bloom import SimpleBloomFilter
    from hudi_engine.write.index import may_contain_any

    bloom = SimpleBloomFilter(100, 0.000001)
    bloom.add_many(["k10", "k20"])

    def footer(lo, hi, f=None):
        return BaseFileFooter(bloom_filter=f, min_key=lo, max_key=hi, num_rows=2, schema=pa.schema([]), metadata={})

    assert may_contain_any(footer("k10", "k20"), pa.array(["k15"]))  # in range, no filter: maybe
    assert not may_contain_any(footer("k10", "k20"), pa.array(["k00", "k30"]))
    assert not may_contain_any(footer("k10", "k20", bloom), pa.array(["k15"]))
    assert may_contain_any(footer("k10", "k20", bloom), pa.array(["k00", "k20"]))
    # Outside the BMP Python's order is not Java's: such keys skip the range check.
    assert may_contain_any(footer("k10", "k20"), pa.array(["\U0001F600"]))
    assert may_contain_any(footer(None, None), pa.array(["zzz"]))


def test_held_matches_membership_whichever_side_is_hashed() -> None:
    rng = np.random.default_rng(7)
    stored = pa.array([f"k{i}" for i in rng.permutation(1000)])
    for keys in (pa.array(["k5", "nope", "k999"]),  # fewer, distinct: the keys are hashed
                 pa.array(["k5", "k5", "nope", "k1", "nope"]),  # repeated keys keep their own answer
                 pa.chunked_array([["k3"], ["x", "k3"]]),
                 pa.array([f"k{i}" for i in range(0, 3000, 2)])):  # more keys than stored: the stored are hashed
        want = np.array([k in set(stored.to_pylist()) for k in keys.to_pylist()])
        assert held(keys, stored).tolist() == want.tolist()
    assert held(pa.array(["a", "a"]), pa.array([], pa.string())).tolist() == [False, False]


def test_a_key_set_probed_again_answers_as_a_scan_by_binary_search() -> None:
    rng = np.random.default_rng(11)
    stored = pa.chunked_array([[f"key-{i}" for i in rng.permutation(3000)[:1500]], ["k", "key-99999999999999"]])
    keys = pa.array([f"key-{i}" for i in range(0, 3000, 3)] + ["k", "k\x00", "key-é", "", None,
                                                                 "key-99999999999999", "key-999999999999999", "a"])
    want = held(keys, stored).tolist()
    ks = KeySet(stored)
    assert [ks.held(keys).tolist() for _ in range(3)] == [want] * 3
    assert ks._sorted is not None and ks._sorted.dtype.itemsize == 24  # sorted on the second probe
    assert ks.held(pa.array([], pa.string())).tolist() == []
    for odd in (["a", "é"], ["a", "b\x00"], ["a", None]):  # not orderable as bytes: every probe scans
        odd_set, probe = KeySet(pa.array(odd)), pa.array(["a", "b", odd[1]])
        assert [odd_set.held(probe).tolist() for _ in range(2)] == [held(probe, pa.array(odd)).tolist()] * 2
        assert odd_set._sorted is None
