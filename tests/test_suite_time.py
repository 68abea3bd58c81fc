"""The suite-time benchmark's arithmetic (benchmarks/suite_time.py): how busy the cores were between two
CPU-time readings, and pytest's summary line, on known answers."""

from __future__ import annotations

from collections import namedtuple

from benchmarks.suite_time import busy_fraction, pytest_summary

Times = namedtuple("Times", "user system idle iowait")


def test_busy_fraction_counts_idle_and_io_wait_as_not_busy():
    before = Times(user=10.0, system=2.0, idle=100.0, iowait=1.0)
    after = Times(user=70.0, system=12.0, idle=120.0, iowait=11.0)  # 70 s busy, 30 s idle or waiting on I/O
    assert busy_fraction(before, after) == 0.7


def test_busy_fraction_without_an_io_wait_field():
    Mac = namedtuple("Mac", "user system idle")  # psutil's fields on macOS
    assert busy_fraction(Mac(0.0, 0.0, 0.0), Mac(3.0, 1.0, 4.0)) == 0.5


def test_busy_fraction_does_not_count_guest_time_twice():
    Linux = namedtuple("Linux", "user nice system idle iowait guest guest_nice")
    before = Linux(*[0.0] * 7)
    after = Linux(user=6.0, nice=0.0, system=0.0, idle=4.0, iowait=0.0, guest=5.0, guest_nice=0.0)  # guest: within user
    assert busy_fraction(before, after) == 0.6


def test_the_pytest_summary_gives_counts_without_warnings_and_seconds():
    output = "....\n==== 943 passed, 12 skipped, 46 warnings in 374.27s (0:06:14) ====\n"
    assert pytest_summary(output) == ("943 passed, 12 skipped", 374.27)
