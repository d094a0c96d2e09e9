// warden — distributed locks on Redis. The umbrella header.
#pragma once

#include <warden/acquire_future.hpp>
#include <warden/cancel.hpp>
#include <warden/client.hpp>
#include <warden/composite_lock.hpp>
#include <warden/config.hpp>
#include <warden/count_down_latch.hpp>
#include <warden/error.hpp>
#include <warden/fair_lock.hpp>
#include <warden/fenced_lock.hpp>
#include <warden/lock.hpp>
#include <warden/lock_lost.hpp>
#include <warden/lock_options.hpp>
#include <warden/multi_lock.hpp>
#include <warden/observer.hpp>
#include <warden/permit_expirable_semaphore.hpp>
#include <warden/read_write_lock.hpp>
#include <warden/red_lock.hpp>
#include <warden/semaphore.hpp>
#include <warden/spin_lock.hpp>
#include <warden/thread_id.hpp>
#include <warden/version.hpp>
