"""front/settled_kinds.py: `settle` finds the kinds that finding each kind again every round
finds, for less."""
import random
import zlib

from autotrace.transforms.front.settled_kinds import settle

KINDS = (None, "array", "other", "passed")


def settle_every_round(kinds: dict, targets, kind_of, rounds: int = 50) -> bool:
    """The loop `settle` stands for; False where it has not settled in `rounds` rounds."""
    for _ in range(rounds):
        changed = False
        for target in targets:
            kind = kind_of(target)
            if kind != kinds.get(target):
                kinds[target] = kind
                changed = True
        if not changed:
            return True
    return False


def _tables():
    """Names that read other names (and themselves, as in a loop), each with a kind for each
    kinds of what it reads that goes up and down (not a join: the order of finding matters):
    those whose every-round loop settles."""
    for seed in range(200):
        chance = random.Random(seed)
        targets = [f"v{i}" for i in range(10)]
        reads = {t: set(chance.sample(targets, chance.randint(0, 3))) for t in targets}
        yield seed, targets, reads


def test_settle_finds_the_kinds_of_finding_each_every_round():
    compared = 0
    for seed, targets, reads in _tables():
        def kind_of(kinds, found, target):
            found.append(target)
            key = repr((seed, target, [kinds.get(read) for read in sorted(reads[target])]))
            return KINDS[zlib.crc32(key.encode()) % len(KINDS)]

        every, found_every = {}, []
        if not settle_every_round(every, targets, lambda t: kind_of(every, found_every, t)):
            continue
        settled, found_settled = {}, []
        settle(settled, targets, reads, lambda t: kind_of(settled, found_settled, t))
        assert settled == every, seed
        assert len(found_settled) <= len(found_every)
        compared += 1
    assert compared > 50
