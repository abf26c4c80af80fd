"""Ownership of a PostgreSQL session space by lease, with epoch fencing.

A space has one row in `durable.leases`: owner, pid, host, `epoch`, `expires_at` (on the SERVER's
clock, so hosts' clocks do not matter) and `commits` (transactions committed in this epoch).

- `acquire`: the row is locked (`FOR UPDATE`: a takeover waits for a commit in flight); a lease
  that has not expired refuses with `SessionLocked` naming owner, pid and host; otherwise the
  epoch is bumped (every open is a new epoch), the previous epoch's final `commits` kept in
  `lease_history`, and the lease runs for `lease_seconds` from now.
- Every commit transaction starts with `durable.fence(...)`: it counts the commit and extends the
  lease only while this epoch holds an unexpired lease, and raises otherwise (a paused,
  partitioned or taken-over owner writes nothing); the row stays locked to the end of the
  transaction, which is what makes a takeover wait.
- `renew` extends the lease on the same terms (never an expired one: once expired, a lease is
  lost for good; the owner must open the space again, as a new epoch). `release` (a clean close)
  expires it at once, so the next open gets in immediately.
- `resolve`: after the connection broke during a commit, whether it landed: this epoch's
  `commits` (in the row, or in `lease_history` after a takeover) is the count expected, or one less.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import Any

from attrs import define

from ...errors import LockLost, SessionLocked
from .driver import import_psycopg

_HISTORY_KEPT = 64  # epochs of lease_history kept per space (an old owner resolving needs its own)


@define
class Lease:
    """The local side of a lease: the monotonic time at which the last successful renewal or
    fenced commit was SENT (`sent_at`). The server's expiry is at least `seconds` after that, so
    `deadline()` (that time plus the lease, less `guard`) is a local bound before which the lease
    surely holds."""

    space: str
    owner: str
    pid: int
    host: str
    seconds: float
    guard: float
    epoch: int = 0
    commits: int = 0  # transactions committed in this epoch (what the server's row counts too)
    sent_at: float = -math.inf  # time.monotonic() when the last renewal or fenced commit was sent
    acked_at: float = -math.inf  # ... and when its answer arrived
    lost: LockLost | None = None
    on_lost: Callable[[LockLost], None] | None = None  # told once, on the writer thread

    def lose(self, error: LockLost) -> LockLost:
        """Record that this epoch lost the lease (the first reason is kept); returns the error."""
        if self.lost is None:
            self.lost = error
            if self.on_lost is not None:
                self.on_lost(error)
        return self.lost

    def deadline(self) -> float:
        """The local monotonic time until which the lease surely holds (less the guard): no
        external work should start after it. -inf when not held."""
        if self.lost is not None or self.epoch == 0:
            return -math.inf
        return self.sent_at + self.seconds - self.guard

    def renewed(self, sent: float) -> None:
        """A renewal or fenced commit sent at `sent` (monotonic) was acknowledged just now."""
        self.sent_at, self.acked_at = sent, time.monotonic()

    def check_expiry(self, location: str) -> LockLost | None:
        """Lose the lease when it has surely run out at the server too: no renewal acknowledged
        for a whole lease (the server set its expiry before that answer; 1% for clock rates).
        Known without asking the server, so also while it cannot be reached."""
        if self.lost is None and self.epoch and time.monotonic() > self.acked_at + self.seconds * 1.01:
            self.lose(lost_error(self, location, None))
        return self.lost


def acquire(conn: Any, lease: Lease, location: str) -> None:
    """Take the space's lease (bumping its epoch) or raise `SessionLocked`."""
    psycopg = import_psycopg()
    try:
        with conn.transaction():
            # A commit in flight holds the row; its owner's session ends if it idles in a
            # transaction for a lease, so the wait is bounded by the holder's lease.
            conn.execute(f"SET LOCAL lock_timeout = {round((lease.seconds + 5) * 1000)}")
            conn.execute("INSERT INTO durable.leases (space) VALUES (%s) ON CONFLICT (space) DO NOTHING",
                         (lease.space,))
            epoch, commits, owner, pid, host, held = conn.execute(
                "SELECT epoch, commits, owner, pid, host, expires_at > clock_timestamp() "
                "FROM durable.leases WHERE space = %s FOR UPDATE", (lease.space,)).fetchone()
            if held:
                raise SessionLocked(location, pid, host=host, owner=owner, what="Session")
            if epoch > 0:
                conn.execute("INSERT INTO durable.lease_history (space, epoch, commits) VALUES (%s, %s, %s) "
                             "ON CONFLICT DO NOTHING", (lease.space, epoch, commits))
                conn.execute("DELETE FROM durable.lease_history WHERE space = %s AND epoch < %s",
                             (lease.space, epoch - _HISTORY_KEPT))
            sent = time.monotonic()
            (new_epoch,) = conn.execute(
                "UPDATE durable.leases SET epoch = epoch + 1, commits = 0, owner = %s, pid = %s, host = %s, "
                "expires_at = clock_timestamp() + %s * interval '1 second', acquired_at = clock_timestamp() "
                "WHERE space = %s RETURNING epoch",
                (lease.owner, lease.pid, lease.host, lease.seconds, lease.space)).fetchone()
    except psycopg.errors.LockNotAvailable:
        row = conn.execute("SELECT owner, pid, host FROM durable.leases WHERE space = %s", (lease.space,)).fetchone()
        owner, pid, host = row if row else (None, None, None)
        raise SessionLocked(location, pid, host=host, owner=owner, what="Session") from None
    lease.epoch, lease.commits, lease.lost = new_epoch, 0, None
    lease.renewed(sent)


def renew(conn: Any, lease: Lease, location: str) -> bool:
    """Extend the lease; False (and `lease.lost` set) when it is no longer this epoch's."""
    sent = time.monotonic()
    row = conn.execute(
        "UPDATE durable.leases SET expires_at = clock_timestamp() + %s * interval '1 second' "
        "WHERE space = %s AND epoch = %s AND expires_at > clock_timestamp() RETURNING epoch",
        (lease.seconds, lease.space, lease.epoch)).fetchone()
    if row is None:
        lease.lose(lost(conn, lease, location))
        return False
    lease.renewed(sent)
    return True


def release(conn: Any, lease: Lease) -> None:
    """Expire this epoch's lease now (a clean close): the next open gets in at once."""
    conn.execute("UPDATE durable.leases SET expires_at = '-infinity' WHERE space = %s AND epoch = %s",
                 (lease.space, lease.epoch))


def lost(conn: Any, lease: Lease, location: str) -> LockLost:
    """The `LockLost` saying why this epoch no longer holds the lease (read from the row)."""
    row = conn.execute("SELECT epoch, owner, pid, host, expires_at > clock_timestamp() FROM durable.leases "
                       "WHERE space = %s", (lease.space,)).fetchone()
    return lost_error(lease, location, row)


def lost_error(lease: Lease, location: str, row: tuple[Any, ...] | None) -> LockLost:
    if row is not None and row[0] != lease.epoch:
        why = f"it was taken over by {row[1]} (process {row[2]} on host {row[3]}, epoch {row[0]})"
    else:
        why = f"it expired (not renewed within {lease.seconds:g} s)"
    return LockLost(f"This store lost its lease on {location}: {why}. It commits nothing more; "
                    f"open the space again to go on", location=location)


def resolve(conn: Any, lease: Lease, expected: int, location: str) -> bool | None:
    """After the connection broke during the commit numbered `expected` in this epoch: True if
    it landed, False if it did not, None if that cannot be known any more. Sets `lease.lost`
    when the space was taken over or the lease has expired."""
    row = conn.execute("SELECT epoch, commits, owner, pid, host, expires_at > clock_timestamp() "
                       "FROM durable.leases WHERE space = %s", (lease.space,)).fetchone()
    if row is None:
        return None
    epoch, commits, _, _, _, held = row
    if epoch == lease.epoch:
        if not held:
            lease.lose(lost_error(lease, location, (epoch, *row[2:5])))
        return commits >= expected if commits in (expected, expected - 1) else None
    lease.lose(lost_error(lease, location, (epoch, *row[2:5])))
    hist = conn.execute("SELECT commits FROM durable.lease_history WHERE space = %s AND epoch = %s",
                        (lease.space, lease.epoch)).fetchone()
    if hist is None or hist[0] not in (expected, expected - 1):
        return None
    return bool(hist[0] == expected)
