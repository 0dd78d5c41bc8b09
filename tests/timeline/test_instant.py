from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest

from hudi_engine.errors import TimelineError
from hudi_engine.timeline.instant import (
    Action,
    Instant,
    InstantTimeGenerator,
    State,
    datetime_to_instant,
    instant_to_datetime,
    looks_like_instant_file,
    new_instant_time,
)

TS = "20240418173213674"

# Every row of the layout-1 file name table (hudi_engine/FORMAT.md, Instant files).
NAMES = [
    (f"{TS}.commit.requested", Action.COMMIT, State.REQUESTED),
    (f"{TS}.inflight", Action.COMMIT, State.INFLIGHT),
    (f"{TS}.commit", Action.COMMIT, State.COMPLETED),
    (f"{TS}.deltacommit.requested", Action.DELTA_COMMIT, State.REQUESTED),
    (f"{TS}.deltacommit.inflight", Action.DELTA_COMMIT, State.INFLIGHT),
    (f"{TS}.deltacommit", Action.DELTA_COMMIT, State.COMPLETED),
    (f"{TS}.replacecommit.requested", Action.REPLACE_COMMIT, State.REQUESTED),
    (f"{TS}.replacecommit.inflight", Action.REPLACE_COMMIT, State.INFLIGHT),
    (f"{TS}.replacecommit", Action.REPLACE_COMMIT, State.COMPLETED),
    (f"{TS}.compaction.requested", Action.COMPACTION, State.REQUESTED),
    (f"{TS}.compaction.inflight", Action.COMPACTION, State.INFLIGHT),
    (f"{TS}.logcompaction.requested", Action.LOG_COMPACTION, State.REQUESTED),
    (f"{TS}.logcompaction.inflight", Action.LOG_COMPACTION, State.INFLIGHT),
    (f"{TS}.clean.requested", Action.CLEAN, State.REQUESTED),
    (f"{TS}.clean.inflight", Action.CLEAN, State.INFLIGHT),
    (f"{TS}.clean", Action.CLEAN, State.COMPLETED),
    (f"{TS}.rollback.requested", Action.ROLLBACK, State.REQUESTED),
    (f"{TS}.rollback.inflight", Action.ROLLBACK, State.INFLIGHT),
    (f"{TS}.rollback", Action.ROLLBACK, State.COMPLETED),
    (f"{TS}.savepoint.inflight", Action.SAVEPOINT, State.INFLIGHT),
    (f"{TS}.savepoint", Action.SAVEPOINT, State.COMPLETED),
    (f"{TS}.restore.requested", Action.RESTORE, State.REQUESTED),
    (f"{TS}.restore.inflight", Action.RESTORE, State.INFLIGHT),
    (f"{TS}.restore", Action.RESTORE, State.COMPLETED),
    (f"{TS}.indexing.requested", Action.INDEXING, State.REQUESTED),
    (f"{TS}.indexing.inflight", Action.INDEXING, State.INFLIGHT),
    (f"{TS}.indexing", Action.INDEXING, State.COMPLETED),
]


@pytest.mark.parametrize("name,action,state", NAMES)
def test_parse_and_format_every_layout1_name(name: str, action: Action, state: State) -> None:
    instant = Instant.parse_file_name(name)
    assert instant == Instant(TS, action, state)
    assert instant.file_name == name


def test_cow_inflight_uses_the_legacy_name() -> None:
    assert Instant(TS, "commit", State.INFLIGHT).file_name == f"{TS}.inflight"
    assert Instant.parse_file_name(f"{TS}.inflight") == Instant(TS, Action.COMMIT, State.INFLIGHT)


def test_compactions_complete_as_commits() -> None:
    assert Instant(TS, Action.COMPACTION, State.COMPLETED).file_name == f"{TS}.commit"
    assert Instant(TS, Action.LOG_COMPACTION, State.COMPLETED).file_name == f"{TS}.deltacommit"
    assert Instant(TS, Action.COMPACTION, State.INFLIGHT).completed() == Instant(TS, Action.COMMIT)
    assert Instant(TS, Action.LOG_COMPACTION, State.REQUESTED).completed() == Instant(TS, Action.DELTA_COMMIT)
    assert Instant(TS, Action.COMPACTION, State.REQUESTED).is_pending_compaction
    assert not Instant(TS, Action.COMPACTION, State.COMPLETED).is_pending_compaction


def test_state_file_names() -> None:
    assert Instant(TS, Action.COMMIT).state_file_names() == [f"{TS}.commit.requested", f"{TS}.inflight", f"{TS}.commit"]
    assert Instant(TS, Action.SAVEPOINT).state_file_names() == [f"{TS}.savepoint.inflight", f"{TS}.savepoint"]
    assert Instant(TS, Action.COMPACTION, State.REQUESTED).state_file_names()[-1] == f"{TS}.commit"


@pytest.mark.parametrize(
    "name",
    [
        "hoodie.properties",
        "hoodie.properties.backup",
        "archived",
        ".temp",
        f"{TS}_20240418173214000.commit",  # layout 2 completed instant
        f"{TS}.commit.1234.tmp",  # a temp file left by a crashed create
        f"{TS}.schemacommit",  # lives in .hoodie/.schema, not on this timeline
        f"{TS}.requested",
        f".{TS}.commit.crc",
        f"{TS}.commit.done",  # an unknown state: Hudi keeps known extensions only (writers refuse it: table_features)
        "",
    ],
)
def test_files_that_are_not_instants_are_ignored(name: str) -> None:
    assert Instant.parse_file_name(name) is None


@pytest.mark.parametrize(
    "name,why",
    [
        (f"{TS}.commit.inflight", "spelt"),
        (f"{TS}.compaction", "spelt"),
        (f"{TS}.logcompaction", "spelt"),
        (f"{TS}.savepoint.requested", "no requested state"),
        ("123.commit", "digits"),
        ("202404181732136.commit", "digits"),  # 15 digits
    ],
)
def test_malformed_instant_names_raise_naming_the_file(name: str, why: str) -> None:
    with pytest.raises(TimelineError) as e:
        Instant.parse_file_name(name)
    assert name in str(e.value) and why in str(e.value)


def test_second_granularity_and_metadata_table_instants_parse() -> None:
    assert Instant.parse_file_name("20240418173213.commit") == Instant("20240418173213", Action.COMMIT)
    assert Instant.parse_file_name("00000000000000.deltacommit") == Instant("00000000000000", Action.DELTA_COMMIT)
    assert Instant.parse_file_name(f"{TS}001.deltacommit").timestamp == f"{TS}001"


def test_constructor_validates() -> None:
    with pytest.raises(TimelineError, match="unknown action 'merge'"):
        Instant(TS, "merge")
    with pytest.raises(TimelineError, match="digits"):
        Instant("2024-04-18", Action.COMMIT)
    with pytest.raises(TimelineError, match="unknown state"):
        Instant(TS, Action.COMMIT, 7)
    assert Instant(TS, "deltacommit", 1) == Instant(TS, Action.DELTA_COMMIT, State.INFLIGHT)
    assert len({Instant(TS, "commit"), Instant(TS, Action.COMMIT, State.COMPLETED)}) == 1


def test_ordering_is_timestamp_then_comparable_action_then_state() -> None:
    t1, t2 = "20240101000000000", "20240101000000001"
    expected = [
        Instant("20240101000000", Action.COMMIT),  # shorter prefix sorts first: plain string comparison
        Instant(t1, Action.CLEAN, State.REQUESTED),
        Instant(t1, Action.COMPACTION, State.REQUESTED),  # compares as a commit
        Instant(t1, Action.COMMIT, State.INFLIGHT),
        Instant(t1, Action.COMMIT, State.COMPLETED),
        Instant(t1, Action.LOG_COMPACTION, State.INFLIGHT),  # compares as a deltacommit
        Instant(t1, Action.DELTA_COMMIT, State.COMPLETED),
        Instant(t1, Action.ROLLBACK, State.REQUESTED),
        Instant(t2, Action.CLEAN, State.REQUESTED),
    ]
    assert sorted(reversed(expected)) == expected
    assert Instant(t1, Action.COMPACTION, State.INFLIGHT) > Instant(t1, Action.COMMIT, State.REQUESTED)
    assert Instant(t1, Action.COMMIT) <= Instant(t1, Action.COMMIT)


def test_instant_time_to_datetime() -> None:
    assert instant_to_datetime("20240418173213674") == datetime(2024, 4, 18, 17, 32, 13, 674000, tzinfo=UTC)
    # Second-granularity instants are read as the last millisecond of that second, as Hudi does.
    assert instant_to_datetime("20240418173213") == datetime(2024, 4, 18, 17, 32, 13, 999000, tzinfo=UTC)
    # Metadata-table suffixes are not part of the time.
    assert instant_to_datetime("20240418173213674002") == instant_to_datetime("20240418173213674")
    with pytest.raises(TimelineError, match="00000000000000"):
        instant_to_datetime("00000000000000")
    with pytest.raises(TimelineError, match="digits"):
        instant_to_datetime("2024")


def test_datetime_to_instant_time() -> None:
    assert datetime_to_instant(instant_to_datetime(TS)) == TS
    plus2 = timezone(timedelta(hours=2))
    assert datetime_to_instant(datetime(2024, 4, 18, 19, 32, 13, 674999, tzinfo=plus2)) == TS
    assert datetime_to_instant(datetime(2024, 4, 18, 17, 32, 13, 674000)) == TS  # naive: already UTC
    local = instant_to_datetime(TS, plus2)  # a LOCAL-timezone table: the digits are wall-clock time there
    assert local.hour == 17 and local.utcoffset() == timedelta(hours=2)


def test_new_instant_time_is_utc_now_and_strictly_increasing() -> None:
    # A generator of its own: the process-wide one has stepped past every timeline earlier tests wrote (some hold
    # instants in the future), so its times depend on which tests ran first.
    gen = InstantTimeGenerator()
    before = datetime.now(UTC) - timedelta(seconds=1)
    times = [gen.new_instant_time() for _ in range(2000)]
    after = datetime.now(UTC) + timedelta(seconds=1)
    assert all(len(t) == 17 and t.isdigit() for t in times)
    assert all(a < b for a, b in zip(times, times[1:]))
    assert datetime_to_instant(before) < times[0] and times[-1] < datetime_to_instant(after + timedelta(seconds=3))
    # The module's function is the process-wide generator: later than anything it issued, never before the clock.
    first, second = new_instant_time(), new_instant_time()
    assert first < second and datetime_to_instant(before) < first


def test_new_instant_time_steps_past_a_timeline_ahead_of_the_clock() -> None:
    gen = InstantTimeGenerator()
    now = datetime(2024, 1, 1, tzinfo=UTC)
    assert gen.new_instant_time(now=now) == "20240101000000000"
    assert gen.new_instant_time(now=now) == "20240101000000001"  # same millisecond: bumped
    assert gen.new_instant_time("20241231235959999", now=now) == "20250101000000000"
    # Stepping past the same timeline again (a second write planned before the first recorded itself): never the same
    assert gen.new_instant_time("20241231235959999", now=now) == "20250101000000001"
    # A timeline ahead of the clock does not lift other tables' instants: without `after`, the clock again (still
    # past every clock time issued: 000, 001 and the two calls that stepped)
    assert gen.new_instant_time(now=now) == "20240101000000004"
    # Compared as strings, the clock's 17 digits already beat a 14-digit instant of the same second ...
    assert InstantTimeGenerator().new_instant_time("20240101000000", now=now) == "20240101000000000"
    # ... and past one ahead of the clock, the step is from its last millisecond (.999).
    assert InstantTimeGenerator().new_instant_time("20240101000005", now=now) == "20240101000006000"
    mdt = "20240101000000000007"
    assert InstantTimeGenerator().new_instant_time(mdt, now=now) == "20240101000000001" > mdt
    assert InstantTimeGenerator().new_instant_time("20230101000000000", now=now) == "20240101000000000"


@pytest.mark.parametrize(
    "name,instant_like",
    [
        (f"{TS}.frobnicate", True), (f"{TS}.frobnicate.requested", True), (f"{TS}.commit.paused", True),
        (f"{TS}_20240418173214000.frobnicate", True), (f"{TS}.commit", True), (f"{TS}.inflight", True),
        ("hoodie.properties", False), ("hoodie.properties.backup", False), (".DS_Store", False),
        (f"._{TS}.commit", False), (f".{TS}.commit.crc", False), (f"{TS}.commit.requested.tmp", False),
        (f"{TS}.commit.6f1e2d3c-aaaa-bbbb", False), (f"{TS}.commit.a1b2c3d4-0000-1111", False),
        (f"{TS}.commit.1234.tmp", False), ("README", False),
    ],
)
def test_instant_like_names(name: str, instant_like: bool) -> None:
    # Hudi's temp files are `<name>.<uuid>`; macOS and Hadoop leave dot files: none of them look like an instant.
    assert looks_like_instant_file(name) is instant_like
