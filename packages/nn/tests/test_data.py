"""tensorplay.utils.data: datasets, samplers, collation and the DataLoader with and without worker processes.

Random orders are checked against orders recorded from PyTorch 2.13 (the RECORDED table below, made with
``torch.utils.data`` and the same seeds), and live against torch when it is installed. Everything else is
checked against plain-Python / NumPy expectations.
"""

from __future__ import annotations

import collections
import os
import random
import signal
import time
import warnings

import numpy as np
import pytest

import tensorplay_p10 as tp
from tensorplay_nn.utils.data import (
    BatchSampler,
    ChainDataset,
    ConcatDataset,
    DataLoader,
    Dataset,
    IterableDataset,
    RandomSampler,
    SequentialSampler,
    StackDataset,
    Subset,
    SubsetRandomSampler,
    TensorDataset,
    WeightedRandomSampler,
    default_collate,
    default_convert,
    get_worker_info,
    random_split,
)
from tensorplay_nn.utils.data._worker import _numpy_seed

# Recorded with torch 2.13.0 (CPU), torch.utils.data with the same arguments and seeds as the tests below.
RECORDED: dict = {
    "random_split_42": [[2, 6, 1], [8, 4, 5], [0, 9, 3, 7]],  # random_split(range(10), [3, 3, 4], g(42))
    "random_sampler_0": [4, 1, 7, 5, 3, 9, 0, 8, 6, 2],  # RandomSampler(range(10), generator=g(0))
    "random_sampler_n10_1": [1, 3, 2, 0, 0, 2, 3, 1, 3, 0],  # RandomSampler(range(4), num_samples=10, g(1))
    # RandomSampler(range(5), replacement=True, num_samples=40, generator=g(2))
    "random_sampler_repl_2": [3, 2, 1, 4, 3, 4, 2, 0, 0, 1, 0, 1, 4, 0, 0, 3, 4, 2, 1, 0]
    + [0, 2, 3, 1, 1, 0, 0, 4, 4, 3, 0, 1, 1, 1, 1, 0, 4, 1, 3, 0],
    "random_sampler_global_7": [5, 6, 3, 4, 2, 1, 7, 0],  # torch.manual_seed(7); RandomSampler(range(8))
    "subset_random_3": [30, 40, 20, 10],  # SubsetRandomSampler([10, 20, 30, 40], generator=g(3))
    "weighted_4": [3, 3, 1, 3, 3, 3, 3, 3, 1, 3, 1, 3],  # WeightedRandomSampler([0, 1, 0, 3], 50, g(4))[:12]
    "loader_shuffle_0": [[3, 7, 5, 2], [0, 8, 1, 6], [9, 4]],  # DataLoader(range(10), 4, shuffle, g(0))
    "base_seed_123": 3624216819017203053,  # torch.empty((), dtype=torch.int64).random_(generator=g(123))
    "numpy_seed_0_0": [2968811710, 3677149159, 745650761, 2884920346],  # worker._generate_state(0, 0)
    "numpy_seed_big_3": [3167859778, 398126399, 4292384237, 4020361526],  # _generate_state(2**40 + 12345, 3)
}


def gen(seed: int) -> tp.Generator:
    return tp.Generator().manual_seed(seed)


# ---- datasets ---------------------------------------------------------------------------------------------
def test_tensor_dataset():
    x, y = tp.arange(12.0).reshape(6, 2), tp.arange(6)
    ds = TensorDataset(x, y)
    assert len(ds) == 6
    a, b = ds[4]
    np.testing.assert_array_equal(a.numpy(), [8.0, 9.0])
    assert b.item() == 4
    with pytest.raises(ValueError, match=r"size mismatch .*\[6, 5\]"):
        TensorDataset(x, tp.arange(5))


def test_concat_dataset_and_add():
    class Squares(Dataset):
        def __init__(self, n):
            self.n = n

        def __getitem__(self, i):
            if i >= self.n:
                raise IndexError(i)
            return i * i

        def __len__(self):
            return self.n

    ds = Squares(3) + Squares(2)
    assert isinstance(ds, ConcatDataset) and len(ds) == 5
    assert [ds[i] for i in range(5)] == [0, 1, 4, 0, 1]
    assert ds[-1] == 1 and ds[-5] == 0
    assert ds.cumulative_sizes == [3, 5]
    with pytest.raises(IndexError, match="index 5 is out of range"):
        ds[5]
    with pytest.raises(ValueError, match="should not exceed dataset length"):
        ds[-6]
    with pytest.raises(ValueError, match="empty"):
        ConcatDataset([])
    with pytest.raises(ValueError, match="IterableDataset"):
        ConcatDataset([Range(3)])


class Range(IterableDataset):
    """0 .. n-1; with workers, each worker takes every num_workers-th item when ``shard`` is set."""

    def __init__(self, n: int, shard: bool = False):
        self.n, self.shard = n, shard

    def __iter__(self):
        info = get_worker_info()
        if self.shard and info is not None:
            return iter(range(info.id, self.n, info.num_workers))
        return iter(range(self.n))

    def __len__(self):
        return self.n


def test_chain_subset_stack():
    chained = Range(2) + Range(3)
    assert isinstance(chained, ChainDataset) and list(chained) == [0, 1, 0, 1, 2] and len(chained) == 5
    sub = Subset(list("abcdef"), [5, 0, 2])
    assert len(sub) == 3 and [sub[i] for i in range(3)] == ["f", "a", "c"]
    assert sub.__getitems__([0, 1]) == ["f", "a"]
    assert StackDataset([1, 2], "ab")[1] == (2, "b")
    assert StackDataset(x=[1, 2], y="ab")[0] == {"x": 1, "y": "a"}
    with pytest.raises(ValueError, match="size mismatch"):
        StackDataset([1, 2], "abc")


def test_random_split_lengths_and_fractions():
    parts = random_split(range(10), [3, 7], generator=gen(42))
    assert [len(p) for p in parts] == [3, 7]
    assert sorted(parts[0].indices + parts[1].indices) == list(range(10))
    # Fractions: floor(10 * f) each, then the remainder dealt one by one from the first split.
    assert [len(p) for p in random_split(range(10), [0.33, 0.33, 0.34], generator=gen(0))] == [4, 3, 3]
    assert [len(p) for p in random_split(range(11), [0.5, 0.5], generator=gen(0))] == [6, 5]
    with pytest.raises(ValueError, match=r"sum of input lengths \(9\) does not equal .* \(10\)"):
        random_split(range(10), [4, 5])
    with pytest.raises(ValueError, match="fraction at index 1 is not between 0 and 1"):
        random_split(range(10), [0.6, 1.2, -0.8])
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        random_split(range(2), [0.9, 0.1], generator=gen(0))
    assert any("index 1 is 0" in str(x.message) for x in w)


def test_random_split_matches_pytorch():
    parts = random_split(range(10), [3, 3, 4], generator=gen(42))
    assert [p.indices for p in parts] == RECORDED["random_split_42"]
    torch = pytest.importorskip("torch")
    import torch.utils.data as tud

    theirs = tud.random_split(range(10), [3, 3, 4], generator=torch.Generator().manual_seed(42))
    assert [list(p.indices) for p in theirs] == [p.indices for p in parts]


# ---- samplers ---------------------------------------------------------------------------------------------
def test_sequential_and_batch_sampler():
    assert list(SequentialSampler(range(4))) == [0, 1, 2, 3]
    bs = BatchSampler(SequentialSampler(range(7)), 3, drop_last=False)
    assert list(bs) == [[0, 1, 2], [3, 4, 5], [6]] and len(bs) == 3
    bs = BatchSampler(range(7), 3, drop_last=True)
    assert list(bs) == [[0, 1, 2], [3, 4, 5]] and len(bs) == 2
    assert list(BatchSampler(range(0), 2, drop_last=False)) == []
    with pytest.raises(
        ValueError, match="batch_size should be a positive integer value, but got batch_size=0"
    ):
        BatchSampler(range(3), 0, False)
    with pytest.raises(ValueError, match="drop_last should be a boolean value"):
        BatchSampler(range(3), 2, 1)


def test_random_sampler_is_a_permutation_and_matches_pytorch():
    order = list(RandomSampler(range(10), generator=gen(0)))
    assert sorted(order) == list(range(10))
    assert order == RECORDED["random_sampler_0"]
    # num_samples beyond the length: whole permutations, the last cut short.
    long = list(RandomSampler(range(4), num_samples=10, generator=gen(1)))
    assert len(long) == 10 and sorted(long[:4]) == sorted(long[4:8]) == [0, 1, 2, 3]
    assert long == RECORDED["random_sampler_n10_1"]
    repl = list(RandomSampler(range(5), replacement=True, num_samples=40, generator=gen(2)))
    assert len(repl) == 40 and set(repl) <= set(range(5))
    assert repl == RECORDED["random_sampler_repl_2"]


def test_random_sampler_without_generator_follows_manual_seed():
    tp.manual_seed(7)
    a = list(RandomSampler(range(8)))
    tp.manual_seed(7)
    assert list(RandomSampler(range(8))) == a == RECORDED["random_sampler_global_7"]


def test_random_sampler_errors():
    with pytest.raises(ValueError, match="replacement should be a boolean value, but got replacement=0"):
        RandomSampler(range(3), replacement=0)
    with pytest.raises(
        ValueError, match="num_samples should be a positive integer value, but got num_samples=0"
    ):
        RandomSampler(range(3), num_samples=0)
    with pytest.raises(ValueError, match="num_samples=0"):
        RandomSampler([])


def test_subset_and_weighted_samplers():
    s = list(SubsetRandomSampler([10, 20, 30, 40], generator=gen(3)))
    assert sorted(s) == [10, 20, 30, 40] and s == RECORDED["subset_random_3"]
    w = list(WeightedRandomSampler([0.0, 1.0, 0.0, 3.0], 50, generator=gen(4)))
    assert len(w) == 50 and set(w) <= {1, 3}
    counts = collections.Counter(w)
    assert counts[3] > counts[1]  # 3:1 odds over 50 draws
    assert w[:12] == RECORDED["weighted_4"]
    nr = list(WeightedRandomSampler([1.0, 1.0, 1.0], 3, replacement=False, generator=gen(5)))
    assert sorted(nr) == [0, 1, 2]
    with pytest.raises(
        ValueError, match="weights should be a 1d sequence but given weights have shape \\(2, 2\\)"
    ):
        WeightedRandomSampler([[1.0, 2.0], [3.0, 4.0]], 2)
    with pytest.raises(ValueError, match="num_samples should be a positive integer"):
        WeightedRandomSampler([1.0], -1)


def test_samplers_live_against_pytorch():
    torch = pytest.importorskip("torch")
    import torch.utils.data as tud

    g = torch.Generator().manual_seed
    assert list(tud.RandomSampler(range(10), generator=g(0))) == list(
        RandomSampler(range(10), generator=gen(0))
    )
    assert list(tud.RandomSampler(range(5), True, 40, generator=g(2))) == list(
        RandomSampler(range(5), True, 40, generator=gen(2))
    )
    assert list(tud.SubsetRandomSampler([10, 20, 30, 40], generator=g(3))) == list(
        SubsetRandomSampler([10, 20, 30, 40], generator=gen(3))
    )
    assert list(tud.WeightedRandomSampler([0.0, 1.0, 0.0, 3.0], 50, generator=g(4))) == list(
        WeightedRandomSampler([0.0, 1.0, 0.0, 3.0], 50, generator=gen(4))
    )


# ---- collation --------------------------------------------------------------------------------------------
Point = collections.namedtuple("Point", ["x", "y"])


def test_collate_tensors_numbers_strings():
    b = default_collate([tp.tensor([1.0, 2.0]), tp.tensor([3.0, 4.0])])
    np.testing.assert_array_equal(b.numpy(), [[1.0, 2.0], [3.0, 4.0]])
    f = default_collate([1.5, 2.0])
    assert f.dtype is tp.float64 and f.tolist() == [1.5, 2.0]
    i = default_collate([1, 2, 3])
    assert i.dtype is tp.int64 and i.tolist() == [1, 2, 3]
    bo = default_collate([True, False])
    assert bo.dtype is tp.bool and bo.tolist() == [True, False]
    assert default_collate(["a", "b"]) == ["a", "b"]
    z = default_collate([tp.tensor(1), tp.tensor(2)])  # 0-d samples give a 1-d batch
    assert z.shape == (2,)


def test_collate_numpy():
    b = default_collate([np.array([1, 2], dtype=np.int32), np.array([3, 4], dtype=np.int32)])
    assert b.dtype is tp.int32 and b.tolist() == [[1, 2], [3, 4]]
    s = default_collate([np.float32(1.5), np.float32(2.5)])
    assert s.dtype is tp.float32 and s.tolist() == [1.5, 2.5]
    with pytest.raises(TypeError, match="found <U1"):
        default_collate([np.array(["a"]), np.array(["b"])])


def test_collate_structures():
    batch = [
        {"img": tp.zeros(2, 2), "label": 0, "meta": Point(1.0, "p")},
        {"img": tp.ones(2, 2), "label": 1, "meta": Point(2.0, "q")},
    ]
    out = default_collate(batch)
    assert out["img"].shape == (2, 2, 2) and out["label"].tolist() == [0, 1]
    assert (
        isinstance(out["meta"], Point)
        and out["meta"].x.tolist() == [1.0, 2.0]
        and out["meta"].y == ["p", "q"]
    )
    od = default_collate([collections.OrderedDict(b=1, a=2)] * 2)
    assert isinstance(od, collections.OrderedDict) and list(od) == ["b", "a"]
    tup = default_collate([(1, "a"), (2, "b")])  # tuples become lists, as in PyTorch
    assert isinstance(tup, list) and tup[0].tolist() == [1, 2] and tup[1] == ["a", "b"]
    lst = default_collate([[1, 2], [3, 4]])
    assert isinstance(lst, list) and [t.tolist() for t in lst] == [[1, 3], [2, 4]]


def test_collate_errors():
    with pytest.raises(RuntimeError, match=r"equal size, but got \[3\] at entry 0 and \[2\] at entry 2"):
        default_collate([tp.zeros(3), tp.zeros(3), tp.zeros(2)])
    with pytest.raises(RuntimeError, match=r"each element in list of batch should be of equal size"):
        default_collate([[1, 2], [1]])
    with pytest.raises(TypeError, match="found <class 'object'>"):
        default_collate([object(), object()])
    with pytest.raises(TypeError, match="mixes tensors"):
        default_collate([tp.zeros(1), 1])


def test_default_convert():
    out = default_convert({"a": np.array([1.0, 2.0]), "b": (np.int64(3), "s"), "c": [np.array(["x"])]})
    assert out["a"].dtype is tp.float64 and out["a"].tolist() == [1.0, 2.0]
    assert isinstance(out["b"], list) and out["b"][0].item() == 3 and out["b"][1] == "s"
    assert isinstance(out["c"][0], np.ndarray)  # string arrays stay arrays
    assert default_convert(Point(np.float64(1.0), 2)).x.item() == 1.0


# ---- DataLoader -------------------------------------------------------------------------------------------
class Noisy(Dataset):
    """Sample i is (i, a random number drawn in whichever process loads it)."""

    def __init__(self, n: int):
        self.n = n

    def __getitem__(self, i):
        return tp.tensor([float(i)]), tp.rand(1)

    def __len__(self):
        return self.n


def test_loader_basics_len_drop_last():
    ds = TensorDataset(tp.arange(10.0), tp.arange(10))
    loader = DataLoader(ds, batch_size=4)
    assert len(loader) == 3 and [y.tolist() for _, y in loader] == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]
    loader = DataLoader(ds, batch_size=4, drop_last=True)
    assert len(loader) == 2 and [y.tolist() for _, y in loader] == [[0, 1, 2, 3], [4, 5, 6, 7]]
    unbatched = list(DataLoader(ds, batch_size=None))
    assert len(unbatched) == 10 and unbatched[3][1].item() == 3
    custom = DataLoader(list(range(5)), batch_sampler=[[4, 0], [2]])
    assert [b.tolist() for b in custom] == [[4, 0], [2]]
    assert len(custom) == 2
    assert [b for b in DataLoader(["a", "b", "c"], batch_size=2, collate_fn=list)] == [["a", "b"], ["c"]]


def test_loader_shuffle_matches_pytorch():
    batches = [b.tolist() for b in DataLoader(list(range(10)), batch_size=4, shuffle=True, generator=gen(0))]
    assert batches == RECORDED["loader_shuffle_0"]


@pytest.mark.parametrize(
    "kwargs,match",
    [
        ({"num_workers": -1}, "num_workers option should be non-negative"),
        ({"timeout": -1}, "timeout option should be non-negative"),
        ({"prefetch_factor": 2}, "prefetch_factor option could only be specified in multiprocessing"),
        ({"persistent_workers": True}, "persistent_workers option needs num_workers > 0"),
        ({"shuffle": True, "sampler": [0]}, "sampler option is mutually exclusive with shuffle"),
        ({"batch_sampler": [[0]], "batch_size": 2}, "batch_sampler option is mutually exclusive"),
        ({"batch_size": None, "drop_last": True}, "batch_size=None option disables auto-batching"),
    ],
)
def test_loader_option_errors(kwargs, match):
    with pytest.raises(ValueError, match=match):
        DataLoader(list(range(4)), **kwargs)


def test_loader_iterable_dataset_option_errors():
    with pytest.raises(ValueError, match="expected unspecified shuffle option, but got shuffle=True"):
        DataLoader(Range(3), shuffle=True)
    with pytest.raises(ValueError, match="expected unspecified sampler option"):
        DataLoader(Range(3), sampler=[0])


@pytest.mark.parametrize("num_workers", [0, 1, 2])
def test_workers_give_identical_batches(num_workers):
    ds = TensorDataset(tp.arange(40.0).reshape(20, 2), tp.arange(20))
    loader = DataLoader(ds, batch_size=3, shuffle=True, generator=gen(5), num_workers=num_workers)
    got = [(x.numpy().copy(), y.tolist()) for x, y in loader]
    ref_order = [
        b.tolist() for b in DataLoader(list(range(20)), batch_size=3, shuffle=True, generator=gen(5))
    ]
    assert [y for _, y in got] == ref_order
    for x, y in got:  # the rows themselves, against NumPy
        np.testing.assert_array_equal(x, np.arange(40.0).reshape(20, 2)[y])
    assert len(loader) == 7


@pytest.mark.parametrize("num_workers", [1, 2, 3])
def test_worker_seeds_follow_the_generator(num_workers):
    loader = DataLoader(Noisy(6), batch_size=2, num_workers=num_workers, generator=gen(123))
    batches = list(loader)
    base_seed = int(tp.empty((), dtype=tp.int64).random_(generator=gen(123)).item())
    assert base_seed == RECORDED["base_seed_123"]
    # Batch k went to worker k mod num_workers, whose stream is tp.manual_seed(base_seed + worker).
    streams = {}
    for k, (_, noise) in enumerate(batches):
        w = k % num_workers
        if w not in streams:
            streams[w] = tp.Generator().manual_seed(base_seed + w)
        expect = tp.rand(2, 1, generator=streams[w])  # two samples of one number each
        np.testing.assert_array_equal(noise.numpy(), expect.numpy())


def record_worker(worker_id):
    info = get_worker_info()
    assert info is not None and info.id == worker_id
    with open(os.environ["TP_TEST_WORKER_LOG"], "a") as f:
        f.write(
            f"{worker_id} {info.seed} {info.num_workers} {random.random()} {np.random.randint(1 << 30)}\n"
        )


def test_worker_init_fn_and_worker_info(tmp_path, monkeypatch):
    log = tmp_path / "workers.log"
    monkeypatch.setenv("TP_TEST_WORKER_LOG", str(log))
    list(
        DataLoader(
            list(range(8)), batch_size=2, num_workers=2, worker_init_fn=record_worker, generator=gen(9)
        )
    )
    rows = sorted(line.split() for line in log.read_text().splitlines())
    base_seed = int(tp.empty((), dtype=tp.int64).random_(generator=gen(9)).item())
    assert [r[:3] for r in rows] == [["0", str(base_seed), "2"], ["1", str(base_seed + 1), "2"]]
    for r in rows:  # Python's and NumPy's generators were seeded from (base_seed, worker)
        wid = int(r[0])
        assert float(r[3]) == random.Random(base_seed + wid).random()
        assert int(r[4]) == np.random.RandomState(_numpy_seed(base_seed, wid)).randint(1 << 30)
    assert get_worker_info() is None


def test_numpy_seed_matches_pytorch():
    assert _numpy_seed(0, 0) == RECORDED["numpy_seed_0_0"]
    assert _numpy_seed(2**40 + 12345, 3) == RECORDED["numpy_seed_big_3"]
    pytest.importorskip("torch")
    from torch.utils.data._utils.worker import _generate_state

    for seed, wid in [(0, 0), (1, 1), (2**63 - 1, 7), (987654321987, 2)]:
        assert _numpy_seed(seed, wid) == _generate_state(seed, wid)


class Failing(Dataset):
    def __getitem__(self, i):
        if i == 5:
            raise KeyError(f"no sample {i} here")
        return i

    def __len__(self):
        return 10


@pytest.mark.parametrize("num_workers", [0, 2])
def test_worker_errors_carry_the_traceback(num_workers):
    loader = DataLoader(Failing(), batch_size=2, num_workers=num_workers)
    it = iter(loader)
    assert next(it).tolist() == [0, 1] and next(it).tolist() == [2, 3]
    with pytest.raises(KeyError) as info:
        next(it)
    text = str(info.value)
    assert "no sample 5 here" in text
    if num_workers:
        assert "Caught KeyError in DataLoader worker process 0" in text
        assert "Traceback (most recent call last)" in text and "in __getitem__" in text


def test_worker_init_fn_errors_surface():
    def bad_init(worker_id):
        raise ValueError(f"init failed in {worker_id}")

    with pytest.raises(ValueError, match="init failed in 0"):
        list(DataLoader(list(range(4)), num_workers=1, worker_init_fn=bad_init))


class Killer(Dataset):
    def __getitem__(self, i):
        if i == 3:
            os.kill(os.getpid(), signal.SIGKILL)
        return i

    def __len__(self):
        return 8


def test_killed_worker_is_reported_not_a_hang():
    with pytest.raises(
        RuntimeError, match=r"DataLoader worker \(pid\(s\) \d+\) exited unexpectedly.*SIGKILL"
    ):
        list(DataLoader(Killer(), batch_size=1, num_workers=2))


class Slow(Dataset):
    def __getitem__(self, i):
        time.sleep(3)  # longer than the timeout below; short, because shutdown waits for it
        return i

    def __len__(self):
        return 2


def test_timeout():
    with pytest.raises(RuntimeError, match="DataLoader timed out after 1 seconds"):
        next(iter(DataLoader(Slow(), num_workers=1, timeout=1)))


class Unpicklable(Dataset):
    def __getitem__(self, i):
        return lambda: i

    def __len__(self):
        return 2


def test_unpicklable_batch_is_an_error_not_a_hang():
    with pytest.raises(Exception, match="pickle"):
        list(DataLoader(Unpicklable(), batch_size=None, num_workers=1))


@pytest.mark.parametrize("num_workers", [0, 1, 2])
def test_iterable_dataset_with_workers(num_workers):
    # Unsharded: every worker yields the whole stream.
    items = sorted(x for b in DataLoader(Range(5), batch_size=2, num_workers=num_workers) for x in b.tolist())
    assert items == sorted(list(range(5)) * max(num_workers, 1))
    # Sharded with get_worker_info: each item once.
    sharded = DataLoader(Range(11, shard=True), batch_size=2, num_workers=num_workers)
    batches = [b.tolist() for b in sharded]
    assert sorted(x for b in batches for x in b) == list(range(11))
    if num_workers == 2:  # batches alternate between the workers, in order
        assert batches[:2] == [[0, 2], [1, 3]]
    dropped = [
        b.tolist() for b in DataLoader(Range(5), batch_size=2, drop_last=True, num_workers=num_workers)
    ]
    assert all(len(b) == 2 for b in dropped) and len(dropped) == 2 * max(num_workers, 1)
    assert (
        len(DataLoader(Range(5), batch_size=2)) == 3
        and len(DataLoader(Range(5), batch_size=2, drop_last=True)) == 2
    )


class Pid(Dataset):
    def __getitem__(self, i):
        return os.getpid()

    def __len__(self):
        return 4


def test_persistent_workers_survive_epochs():
    loader = DataLoader(Pid(), batch_size=1, num_workers=2, persistent_workers=True)
    first = [b.item() for b in loader]
    second = [b.item() for b in loader]
    assert len(first) == len(second) == 4 and set(first) == set(second) and os.getpid() not in first
    partial = iter(loader)
    next(partial)  # an epoch abandoned half way, then a new one: all four batches again
    assert len([b.item() for b in loader]) == 4
    fresh = DataLoader(Pid(), batch_size=1, num_workers=2)
    assert set(b.item() for b in fresh).isdisjoint(b.item() for b in fresh)  # non-persistent: new workers


@pytest.mark.parametrize("num_workers", [0, 2])
def test_prefetch_factor_and_pin_memory(num_workers):
    kwargs = {"prefetch_factor": 3} if num_workers else {}
    loader = DataLoader(
        TensorDataset(tp.arange(9.0)), batch_size=2, num_workers=num_workers, pin_memory=True, **kwargs
    )
    assert [x.tolist() for (x,) in loader] == [[0.0, 1.0], [2.0, 3.0], [4.0, 5.0], [6.0, 7.0], [8.0]]


@pytest.mark.parametrize("name", ["dataset", "sampler", "collate", "dataloader", "_worker"])
def test_docstring_examples(name):
    import doctest
    import importlib

    module = importlib.import_module(f"tensorplay_nn.utils.data.{name}")
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0 and result.attempted > 0
