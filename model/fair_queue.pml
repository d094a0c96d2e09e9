/*
 * FairLock's queue, as fair_acquire.lua, fair_give_up.lua and fair_release.lua
 * keep it: three owners, the lock's holder, the queue (redisson_lock_queue)
 * and each waiter's deadline (redisson_lock_timeout). Every script is one
 * atomic step on the server's clock, the tick `now`; W, the fair-lock wait
 * timeout, is W ticks.
 *
 * A live waiter tries again at least every W/3 (the reply never asks it to
 * wait longer): here, at least once per tick, which the clock waits for. A
 * waiter may die (stop trying) or give up. Property: a waiter is dropped from
 * the queue as gone only once it has died.
 *
 * NEG_SLOW_RETRY: a waiter writes its deadline as now + W whatever its
 * place (instead of now + place * W) and tries again only every W ticks (a
 * reply hint not capped at W/3): Spin finds a live waiter dropped.
 */
#ifndef W
#define W 3
#endif
#ifndef T
#define T 5
#endif
#define N 3
#define NONE 255

byte now;
byte holder = NONE;
byte queue[N];     /* waiter ids, head first */
byte qlen;
byte score[N];     /* the deadline of waiter w (valid while queued) */
bit dead[N];       /* w stopped trying (its process died) */
bit gave_up[N];
bit tried[N];      /* w tried during this tick */
byte acquired[N];  /* how often w took the lock (bounded) */

inline position_of(w, p) {
  p = 0; i = 0;
  do
  :: i < qlen && queue[i] == w -> p = i + 1; break
  :: i < qlen && queue[i] != w -> i++
  :: i >= qlen -> break
  od
}

/* Removes queue[k]; the ones behind move up. */
inline remove_at(k) {
  i = k;
  do
  :: i + 1 < qlen -> queue[i] = queue[i + 1]; i++
  :: else -> break
  od;
  qlen--; queue[qlen] = 0
}

/* Drop gone waiters from the head, leaving the others' deadlines as they are. */
inline drop_gone() {
  do
  :: qlen > 0 && score[queue[0]] <= now ->
    assert(dead[queue[0]] || gave_up[queue[0]]);   /* a live waiter is never dropped */
    score[queue[0]] = 0; remove_at(0)
  :: else -> break
  od
}

/* fair_acquire.lua, with join = 1 */
inline fair_acquire(w) {
  drop_gone();
  if
  :: holder == NONE && (qlen == 0 || queue[0] == w) ->
    if
    :: qlen > 0 && queue[0] == w ->
      remove_at(0); score[w] = 0;
      i = 0;
      do
      :: i < qlen -> score[queue[i]] = score[queue[i]] - W; i++   /* everyone moved up one place */
      :: else -> break
      od
    :: else -> skip
    fi;
    holder = w; acquired[w]++
  :: else ->
    position_of(w, p);
    if
    :: p == 0 -> queue[qlen] = w; qlen++; p = qlen
    :: else -> skip
    fi;
#ifdef NEG_SLOW_RETRY
    score[w] = now + W
#else
    score[w] = now + p * W
#endif
  fi
}

/* fair_give_up.lua */
inline fair_give_up(w) {
  position_of(w, p);
  if
  :: p > 0 ->
    i = p;
    do
    :: i < qlen -> score[queue[i]] = score[queue[i]] - W; i++
    :: else -> break
    od;
    score[w] = 0; remove_at(p - 1)
  :: else -> skip
  fi
}

/* fair_release.lua: gone waiters dropped, the lock freed */
inline fair_release() {
  drop_gone();
  holder = NONE
}

proctype waiter(byte w) {
  byte i, p;
end_wait:
  do
  :: atomic { !dead[w] && !gave_up[w] && holder != w && acquired[w] < 2 -> fair_acquire(w); tried[w] = 1; i = 0; p = 0 }
  :: atomic { !dead[w] && !gave_up[w] && holder == w -> fair_release(); i = 0; p = 0 }
  :: atomic { !dead[w] && !gave_up[w] && holder != w -> gave_up[w] = 1; fair_give_up(w); i = 0; p = 0 }
  :: atomic { !dead[w] && holder != w -> dead[w] = 1 }
  :: atomic { (dead[w] || gave_up[w] || acquired[w] == 2) && holder != w -> break }
  od
}

/* Time passes once every live queued waiter has tried in this tick. */
active proctype clock() {
  byte i, p, w;
end_tick:
  do
  :: atomic { now < T ->
      w = 0;
      do
      :: w < N -> position_of(w, p);
#ifdef NEG_SLOW_RETRY
        if :: p > 0 && !dead[w] && !gave_up[w] && !tried[w] && now % W != 0 -> goto not_yet :: else -> skip fi;
#else
        if :: p > 0 && !dead[w] && !gave_up[w] && !tried[w] -> goto not_yet :: else -> skip fi;
#endif
        w++
      :: else -> break
      od;
      now++;
      tried[0] = 0; tried[1] = 0; tried[2] = 0;
not_yet: i = 0; p = 0; w = 0 }
  :: now == T -> break
  od
}

init {
  atomic { run waiter(0); run waiter(1); run waiter(2) }
}
