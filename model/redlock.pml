/*
 * RedLock over three independent masters, as RedCore judges its hold: each
 * node's confirmed validity (send time of the last confirmed acquire, renewal
 * or re-take + lease); the hold is valid while a majority of nodes is
 * confirmed valid; once that lapses the hold is lost for good, and a node
 * re-taken afterwards does not bring it back. Client A holds first; its
 * watchdog may be late; a node whose key is gone is re-taken while the hold
 * is not lost. Client B takes whatever nodes are free. Time is the tick `now`.
 *
 * Property: a hold that was never reported lost was exclusive over its whole
 * span: while A holds it unlost and valid, B has never been valid since A's
 * hold began.
 *
 * NEG_RETAKE: the hold counts as lost only when fewer than a majority of nodes
 * are in its book (before 1316f05): a lapsed hold re-takes its nodes and comes
 * back to life.
 */
#define L 2
#ifndef T
#define T 5
#endif
#define NONE 0
#define A 1
#define B 2

byte now;
byte owner[3];     /* the key on node i: NONE, A or B */
byte kexp[3];      /* its expiry tick */

/* A's hold */
bit a_holds;       /* the hold exists (taken, not released) */
bit a_lost;        /* reported lost */
bit a_in[3];       /* node i is in the hold's book */
byte a_vu[3];      /* node i's confirmed valid_until */
/* B */
byte b_nodes;      /* bit i: B holds node i */
byte b_vu[3];
bit b_was_valid;   /* B was valid since A's hold began */

/* a majority (2 of 3) of A's nodes confirmed valid now */
#define a_count_valid ((a_in[0] && now < a_vu[0]) + (a_in[1] && now < a_vu[1]) + (a_in[2] && now < a_vu[2]))
#define a_valid (a_holds && !a_lost && a_count_valid >= 2)
#define b_count_valid (((b_nodes & 1) && now < b_vu[0]) + ((b_nodes & 2) && now < b_vu[1]) + ((b_nodes & 4) && now < b_vu[2]))
#define b_valid (b_count_valid >= 2)

#define SPAN assert(!(a_valid && b_was_valid))

inline expire() {
  i = 0;
  do
  :: i < 3 -> if :: owner[i] != NONE && now >= kexp[i] -> owner[i] = NONE :: else -> skip fi; i++
  :: else -> break
  od
}

/* RedCore's judgement of A's hold at `now` */
inline judge() {
#ifndef NEG_RETAKE
  if :: a_holds && !a_lost && a_count_valid < 2 -> a_lost = 1 :: else -> skip fi
#else
  if :: a_holds && !a_lost && a_in[0] + a_in[1] + a_in[2] < 2 -> a_lost = 1 :: else -> skip fi
#endif
}

active proctype clock() {
  byte i;
end_tick:
  do
  :: atomic { now < T -> now++; expire(); judge(); if :: b_valid -> b_was_valid = a_holds :: else -> skip fi; i = 0 }
  :: now == T -> break
  od
}

active proctype client_a() {
  byte i;
  /* acquire: every node free at the start */
  atomic {
    i = 0;
    do
    :: i < 3 -> owner[i] = A; kexp[i] = now + L; a_in[i] = 1; a_vu[i] = now + L; i++
    :: else -> break
    od;
    a_holds = 1; i = 0 }
end_a:
  do
  /* the watchdog renews node i (lock_renew.lua), sent and answered now */
  :: atomic { a_holds && !a_lost -> select(i : 0 .. 2);
      if
      :: a_in[i] && owner[i] == A -> kexp[i] = now + L; a_vu[i] = now + L
      :: a_in[i] && owner[i] != A -> a_in[i] = 0; judge()         /* the node's hold is gone */
      :: else -> skip
      fi; SPAN; i = 0 }
  /* a node lost while the hold is not: re-taken if free */
  :: atomic { a_holds && !a_lost -> select(i : 0 .. 2);
      if
      :: !a_in[i] && owner[i] == NONE -> owner[i] = A; kexp[i] = now + L; a_in[i] = 1; a_vu[i] = now + L
      :: else -> skip
      fi; SPAN; i = 0 }
  od
}

active proctype client_b() {
  byte i;
end_b:
  do
  :: atomic { a_holds -> select(i : 0 .. 2);   /* after A has taken its hold */
      if
      :: owner[i] == NONE -> owner[i] = B; kexp[i] = now + L; b_nodes = b_nodes | (1 << i); b_vu[i] = now + L
      :: else -> skip
      fi;
      if :: b_valid -> b_was_valid = a_holds; assert(!(a_valid && b_valid)) :: else -> skip fi;
      i = 0 }
  :: atomic { b_nodes != 0 ->   /* B releases every node it holds */
      i = 0;
      do
      :: i < 3 -> if :: (b_nodes & (1 << i)) && owner[i] == B -> owner[i] = NONE :: else -> skip fi; i++
      :: else -> break
      od;
      b_nodes = 0; i = 0 }
  od
}
