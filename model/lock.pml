/*
 * warden's lock protocol, as the scripts in lua/ and the acquire, settle,
 * renewal and release paths of src/lock/ run it. Checked by Spin:
 * scripts/check-model; what each property means and what the model assumes:
 * model/README.md and docs/model.md.
 *
 * One lock, two clients with one owner each. Time is a tick counter shared by
 * every clock (see DRIFT below); a lease is L ticks. Every script runs as one
 * atomic step on the master, as Redis runs a Lua script.
 *
 * Switches (-D on the spin command line):
 *   FENCED          the lock is a FencedLock: every hold draws a token
 *   FAILOVER        one failover: the replica, as far as it got, becomes master
 *   WAIT            replica acknowledgement (Config::replica_sync): a marked
 *                   write is answered only once the replica has it
 *   RESTART         one restart of the master from its AOF
 *   FSYNC_EVERYSEC  the AOF is written once per tick instead of before each
 *                   reply (appendfsync everysec instead of always)
 *   NEG_NO_LANE     bug: a take-back is sent in the background and the owner's
 *                   next acquire goes out before it is answered (no lane)
 *   NEG_NO_CANCEL   bug: a settle that finds the attempt did not take effect
 *                   sets no cancel mark
 *   NEG_LAPSED_REENTRY  bug: the book adds a re-entrant level to a hold whose
 *                   valid_until has passed
 *   NEG_STALE_KEEP  bug: a kept settle leaves the key's expiry as it stood
 *   NEG_LATE_RELEASE  bug: a release answered "not held" sets no latch: a
 *                   copy of it that runs late releases the owner's next hold
 *   NEG_LATE_SETTLE bug: a settle neither reads the attempt's mark first nor
 *                   marks a take-back: a copy of it that runs late takes the
 *                   owner's next hold back
 *   NEG_TAKE_BACK_GIVE_UP  bug: a take-back unanswered by its deadline
 *                   (max(command_timeout, lease)) gives up and leaves the lane
 *                   at once, leaving no mark on the attempt: a copy of it that
 *                   runs after the owner's next acquire takes that hold back
 *   LOST_FIRST      the answer to client 0's first acquire is lost, at no
 *                   cost to MAXF: with MAXF=1 the runs where a take-back of
 *                   it gives up (which takes two faults) are searched at the
 *                   cost of one (LockTakeBackGiveUp)
 *   MAXF            how many faults a run may contain (default 2)
 *   T               the last tick (default 5)
 */

#ifdef NEG_NO_LANE
#define NOLANE 1
#else
#define NOLANE 0
#endif

#ifndef L
#define L 2            /* the lease, in ticks */
#endif
#ifndef T
#define T 5            /* the last tick: time is bounded so the search ends */
#endif
#ifndef MAXF
#define MAXF 2         /* faults per run: lost replies, time-outs, NOSCRIPT, restart, failover */
#endif
#define NOPS 2         /* acquire calls of client 0; client 1 makes one */
#define MAXHELD 2      /* how deep a client re-enters */
#ifndef NRENEW
#define NRENEW 1       /* renewals per client */
#endif

/* ---- the server's state, three copies: the master, the replica, the AOF ---- */
#define MASTER 0
#define REPLICA 1
#define AOF 2
byte cnt[6];       /* cnt[k*2+o]: owner o's hold count in copy k (the lock's hash) */
byte kexp[3];      /* the tick the key expires at (absolute, as replicated) */
byte marks[3];     /* bit a: attempt a's cancel mark (settled: not taken) */
byte backs[3];     /* bit a: attempt a's mark says it was taken back */
byte latch[12];    /* latch[k*4+r]: release r's remembered answer + 1; 0: none */
byte token[3];     /* FencedLock: the token counter (redisson_lock_token) */

#define held_key(k) (cnt[(k)*2] + cnt[(k)*2+1] > 0)

inline copy_state(dst, src) {
  cnt[dst*2] = cnt[src*2]; cnt[dst*2+1] = cnt[src*2+1];
  kexp[dst] = kexp[src]; marks[dst] = marks[src]; backs[dst] = backs[src]; token[dst] = token[src];
  latch[dst*4] = latch[src*4]; latch[dst*4+1] = latch[src*4+1];
  latch[dst*4+2] = latch[src*4+2]; latch[dst*4+3] = latch[src*4+3]
}

/* A key past its expiry is gone, in every copy (expiry is absolute). */
inline expire_keys() {
  i = 0;
  do
  :: i < 3 -> if :: held_key(i) && now >= kexp[i] -> cnt[i*2] = 0; cnt[i*2+1] = 0 :: else -> skip fi; i++
  :: else -> break
  od
}

/* ---- time and the clients' books ---- */
byte now;          /* the tick; every clock reads it (the drift assumption) */
byte held[2];      /* client c's book: how many levels of its hold it has */
byte vu[2];        /* client c's book: valid_until = send tick of the last confirmed acquire/renewal + L */
byte faults;       /* faults so far */
bit failed_over;
bit restarted;
bit lost_first;    /* LOST_FIRST: that answer was lost */

#define valid(c) (held[c] > 0 && now < vu[c])
/* no two valid holders: checked wherever a book changes (time passing only
 * ends validity, and the server's steps change no book) */
#define EXCLUSION assert(!(valid(0) && valid(1)))

/* ---- ghosts: what the properties look at ---- */
byte settled_no;   /* bit a: attempt a was settled as not taken (the client was told so) */
int handed;        /* bit t: token t was handed to a caller */

/* ---- the wire ---- */
mtype = { ACQ, SETTLE, RENEW, REL, MARK };            /* requests */
mtype = { R_OK, R_BUSY, R_CANCELLED, R_NOT, R_KEPT, R_TAKEN, R_ONE, R_ZERO, R_NIL }; /* answers */
/* q[c*2+k]: client c's connection k, in order; a reconnect moves to the other
 * one, and what the old one still carries may run later. */
chan q[4] = [3] of { mtype, byte, byte, byte };        /* kind, seq, id, arg */
chan r[2] = [1] of { byte, mtype, byte };              /* seq, answer, value */
byte want[2];      /* the tag client c waits for; 0: none (a late answer is dropped) */
/* A command's tag: its kind and id. A re-sent release or settle has the tag
 * of its first copy: whichever copy runs first answers. */
#define TAG(kind, id) ((kind) * 16 + (id) + 1)
bit lostrep[2];    /* the answer client c waits for was lost: its time-out costs no fault */

inline drop_connections() {
  i = 0;
  do
  :: i < 4 -> do :: q[i]?_,_,_,_ :: empty(q[i]) -> break od; i++
  :: else -> break
  od;
  i = 0;
  do
  :: i < 2 -> do :: r[i]?_,_,_ :: empty(r[i]) -> break od; lostrep[i] = 1; i++
  :: else -> break
  od
}

/* ---- the scripts, on the master ---- */

/* lock_acquire.lua / fenced_acquire.lua: cancel check, then take a free lock
 * or re-enter one's own. */
inline s_acquire(c, a) {
  if
  :: (marks[MASTER] | backs[MASTER]) & (1 << a) -> rk = R_CANCELLED   /* the mark exists */
  :: else ->
    if
    :: !held_key(MASTER) || cnt[c] > 0 ->
      /* a settled attempt never takes effect later */
      assert(!(settled_no & (1 << a)));
      cnt[c]++; kexp[MASTER] = now + L; rk = R_OK; marked = 1;
#ifdef FENCED
      token[MASTER]++; rv = token[MASTER]
#endif
    :: else -> rk = R_BUSY
    fi
  fi
}

/* *_resolve_acquire.lua: settle_check, then keep_hold or take_back. A
 * settle finds the attempt's mark first: a copy that runs after another copy
 * of it settled the attempt answers as that one did and changes nothing
 * (NEG_LATE_SETTLE: the mark is not read, and a take-back sets none). */
inline s_settle(c, a, expected, keep) {
  if
#ifndef NEG_LATE_SETTLE
  :: marks[MASTER] & (1 << a) -> rk = R_NOT
  :: backs[MASTER] & (1 << a) -> rk = R_TAKEN
#endif
  :: else -> if
  :: cnt[c] != expected ->
#ifndef NEG_NO_CANCEL
    marks[MASTER] = marks[MASTER] | (1 << a);
#endif
    rk = R_NOT
  :: else ->
    if
    :: keep -> rk = R_KEPT; marked = 1;
#ifndef NEG_STALE_KEEP
      kexp[MASTER] = now + L;              /* keep_hold: the whole lease again */
#endif
      /* NEG_STALE_KEEP: the expiry left as it stood (keep_hold before the fix) */
#ifdef FENCED
      token[MASTER]++; rv = token[MASTER]  /* a kept hold draws a fresh token */
#endif
    :: else ->
      rk = R_TAKEN;
#ifndef NEG_LATE_SETTLE
      backs[MASTER] = backs[MASTER] | (1 << a);
#endif
      if
      :: cnt[c] > 1 -> cnt[c]--; kexp[MASTER] = now + L
      :: else -> cnt[c] = 0                 /* hdel, or del when it was the only hold */
      fi
    fi
  fi fi
}

/* lock_renew.lua, one hold */
inline s_renew(c) {
  if
  :: cnt[c] > 0 -> kexp[MASTER] = now + L; rk = R_ONE; marked = 1
  :: else -> rk = R_ZERO
  fi
}

/* lock_release.lua with its unlock latch, set on every answer ("not held"
 * too: NEG_LATE_RELEASE sets none then) */
inline s_release(c, rel) {
  if
  :: latch[rel] == 1 -> rk = R_ZERO
  :: latch[rel] == 2 -> rk = R_ONE
  :: latch[rel] == 3 -> rk = R_NIL
  :: else ->
    if
    :: cnt[c] == 0 -> rk = R_NIL;
#ifndef NEG_LATE_RELEASE
      latch[rel] = 3
#else
      skip
#endif
    :: cnt[c] > 1 -> cnt[c]--; kexp[MASTER] = now + L; latch[rel] = 1; rk = R_ZERO; marked = 1
    :: else -> cnt[0] = 0; cnt[1] = 0; latch[rel] = 2; rk = R_ONE; marked = 1
    fi
  fi
}

/* SET <the attempt's mark> 1 NX PX: what a take-back that gave up sets
 * before it leaves the lane (AcquireOp, mark_given_up); a mark a copy of the
 * take-back set already stays as it is. */
inline s_mark(a) {
  if
  :: !((marks[MASTER] | backs[MASTER]) & (1 << a)) -> marks[MASTER] = marks[MASTER] | (1 << a); marked = 1
  :: else -> skip
  fi;
  rk = R_OK
}

/* The master: takes the next command of any connection, runs it, answers. */
#define SERVE(k) :: q[k]?kind,seq,id,arg -> c = (k) / 2; \
  if \
  :: len(q[k]) > 0 && faults < MAXF -> faults++; q[k]!kind,seq,id,arg; \
     kind = 0; seq = 0; id = 0; arg = 0; c = 0; goto served /* NOSCRIPT: re-sent, behind the others */ \
  :: else -> skip \
  fi

active proctype server() {
  mtype kind, rk;
  byte seq, id, arg, c, rv, i;
  bit marked;
end_serve:
  do
  :: atomic {
    if
    SERVE(0)
    SERVE(1)
    SERVE(2)
    SERVE(3)
    fi;
    rk = R_NIL; rv = 0; marked = 0;
    /* any command may run late: a copy left in a dropped connection, after
     * its re-send was answered */
    if
    :: kind == ACQ -> s_acquire(c, id)
    :: kind == SETTLE -> s_settle(c, id, arg / 2, arg % 2)
    :: kind == RENEW -> s_renew(c)
    :: kind == REL -> s_release(c, id)
    :: kind == MARK -> s_mark(id)
    fi;
#if defined(RESTART) && !defined(FSYNC_EVERYSEC)
    copy_state(AOF, MASTER);           /* appendfsync always: on disk before any answer */
#endif
#if defined(FAILOVER) && defined(WAIT)
    if
    :: marked -> copy_state(REPLICA, MASTER)   /* WAIT: the replica has everything up to here */
    :: else -> skip
    fi;
#endif
    if
#ifdef LOST_FIRST
    :: want[c] == seq && !lost_first && kind == ACQ && id == 0 -> lost_first = 1; lostrep[c] = 1
    :: want[c] == seq && !(!lost_first && kind == ACQ && id == 0) ->
#else
    :: want[c] == seq ->
#endif
      if
      :: r[c]!seq,rk,rv
      :: faults < MAXF -> faults++; lostrep[c] = 1   /* the answer is lost (or WAIT fell short) */
      fi
    :: else -> skip                                   /* nobody waits for it any more */
    fi;
    kind = 0; rk = 0; seq = 0; id = 0; arg = 0; c = 0; rv = 0; marked = 0   /* forget: fewer states */
  }
served: skip
#ifdef RESTART
  :: atomic { !restarted && faults < MAXF -> faults++; restarted = 1;
      copy_state(MASTER, AOF); copy_state(REPLICA, MASTER); expire_keys(); drop_connections() }
#endif
#ifdef FAILOVER
  :: atomic { !failed_over && faults < MAXF -> faults++; failed_over = 1;
      copy_state(MASTER, REPLICA); copy_state(AOF, MASTER); expire_keys(); drop_connections() }
#endif
  od
}

/* Time passes; keys expire; a hold whose valid_until passed is lost (the
 * watchdog's timer). */
active proctype clock() {
  byte i;
  do
  :: atomic { now < T ->
      now++;
      expire_keys();
#if defined(RESTART) && defined(FSYNC_EVERYSEC)
      copy_state(AOF, MASTER);
#endif
#ifdef FAILOVER
      /* asynchronous replication: the replica catches up, or lags another tick */
      if :: copy_state(REPLICA, MASTER) :: skip fi;
#endif
      i = 0;
      do
      :: i < 2 -> if :: held[i] > 0 && now >= vu[i] -> held[i] = 0 :: else -> skip fi; i++
      :: else -> break
      od }
  :: now == T -> break
  od
}

/* ---- the client ---- */

/* Sends a command in the owner's lane. */
inline send(kind, id, arg) {
  want[c] = TAG(kind, id); lostrep[c] = 0; q[c*2+conn]!kind,TAG(kind, id),id,arg
}

/* Waits for the answer, or times out (the answer was lost, or the command is
 * slow: then it may still run later); a time-out may reconnect, moving to the
 * other connection. */
inline await() {
  if
  :: r[c]?_,ans,val -> want[c] = 0; answered = 1
  :: empty(r[c]) && (lostrep[c] || faults < MAXF) ->
    if :: lostrep[c] -> lostrep[c] = 0 :: else -> faults++ fi;
    want[c] = 0; answered = 0;
    conn = 1 - conn
  fi
}

inline took_token() {
#ifdef FENCED
  assert(!(handed & (1 << val)));    /* a fencing token never repeats */
  handed = handed | (1 << val)
#else
  skip
#endif
}

/* A finished call's locals are reset, so that states differ only in what matters. */
inline forget() {
  ans = 0; val = 0; a = 0; expected = 0; sent = 0; answered = 0; keep = 0; tb_sent = 0; marking = 0
}

/* The book's rule for a hold whose valid_until has passed but that no timer
 * has reported lost yet: it is lost before a new level is counted (sent, or
 * filed from an answer). Its key may have expired before the new acquire ran,
 * which then made a fresh hold of count 1, not a re-entry: a book that counted
 * the old levels would free the lock on the server with a release it thinks
 * leaves a level held (HoldBook::entering and HoldBook::acquired). NEG_LAPSED_REENTRY:
 * the bug put back, the level added to the lapsed hold and its valid_until re-set. */
inline drop_lapsed() {
#ifndef NEG_LAPSED_REENTRY
  if :: held[c] > 0 && now >= vu[c] -> held[c] = 0 :: else -> skip fi
#else
  skip
#endif
}

proctype client(byte c) {
  mtype ans;
  byte val, conn, ops, a, expected, sent, rel, renewals;
  byte tb_sent;      /* the tick the take-back was first sent, + 1; 0: none */
  bit answered, keep;
  bit marking;       /* the take-back gave up: the attempt's mark is being set */
  do
  :: atomic { ops < NOPS - c && held[c] < MAXHELD ->
      /* one try of an acquire (lock_acquire.lua) */
      a = c * NOPS + ops; ops++;
      drop_lapsed(); expected = held[c] + 1;   /* AcquireOp: the book's count + 1 */
      sent = now; send(ACQ, a, 0) }
    atomic { await();
      if
      :: answered && ans == R_OK -> drop_lapsed(); held[c]++; vu[c] = sent + L; took_token(); EXCLUSION; forget()
      :: answered && ans != R_OK -> forget()  /* busy or cancelled: not acquired */
      :: !answered ->
        /* the answer was lost: settle. keep: the caller still waits; else it
         * has gone (cancelled, timed out) and the attempt is taken back. */
        if :: keep = 1 :: keep = 0 fi
      fi }
    do
    :: expected == 0 -> break
    :: expected != 0 && marking ->
      /* the take-back gave up: mark the attempt (not taken, NX) before the
       * lane is left, sent again until answered */
      atomic { send(MARK, a, 0) }
      atomic { await();
        if
        :: answered -> forget()
        :: else -> skip
        fi }
    :: expected != 0 && !marking && NOLANE && !keep ->
      /* bug: the take-back goes out and the owner goes on without its answer */
      atomic { send(SETTLE, a, expected * 2); want[c] = 0; forget() }
    :: expected != 0 && !marking && !(NOLANE && !keep) ->
      /* settled in the lane: the owner's next command waits for the answer */
      atomic { send(SETTLE, a, expected * 2 + keep);
        if :: tb_sent == 0 && !keep -> tb_sent = now + 1 :: else -> skip fi }
      atomic { await();
        if
        :: answered ->
          if
          :: ans == R_KEPT -> drop_lapsed(); held[c]++; vu[c] = sent + L; took_token(); EXCLUSION
          :: ans == R_NOT -> settled_no = settled_no | (1 << a)
          :: else -> skip
          fi;
          forget()
        :: !answered && !keep && now + 1 >= tb_sent + L ->
          /* gave up (its deadline, max(command_timeout, lease) after it was
           * first sent); the caller has had its answer already */
#ifndef NEG_TAKE_BACK_GIVE_UP
          marking = 1
#else
          forget()                          /* bug: leaves the lane, no mark */
#endif
        :: else -> skip                     /* idempotent: sent again */
        fi }
    od
  :: atomic { held[c] > 0 && renewals < NRENEW ->
      /* the watchdog renews the hold (lock_renew.lua) */
      renewals++; sent = now; send(RENEW, 0, 0) }
    atomic { await();
      if
      :: answered && ans == R_ONE && held[c] > 0 -> vu[c] = sent + L; EXCLUSION
      :: answered && ans == R_ZERO -> held[c] = 0   /* lost */
      :: else -> skip
      fi;
      forget() }
  :: atomic { held[c] > 0 ->
      /* release one level (lock_release.lua); a final release is no longer
       * a valid hold once it is sent */
      if :: held[c] == 1 -> held[c] = 0 :: else -> skip fi;
      rel++; expected = 1 }
    do
    :: expected == 0 -> break
    :: else ->
      atomic { send(REL, c * 2 + rel - 1, 0) }
      atomic { await();
        if
        :: answered ->
          if
          :: ans == R_ZERO && held[c] > 0 -> held[c]--
          :: else -> held[c] = 0        /* freed, or not held (lost) */
          fi;
          forget()
        :: else -> skip                 /* the latch makes it idempotent: sent again */
        fi }
    od
  :: ops == NOPS - c && held[c] == 0 -> break
  od
}

init {
  atomic { run client(0); run client(1) }
}


