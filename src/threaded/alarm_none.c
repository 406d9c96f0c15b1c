/*
 * No alarm (Windows): the Threaded timed calls there never arm one (operate_none.c: a timed call is
 * the library's concurrent task, ended by a cancel), so the pool keeps no alarm thread. alarm.c says
 * what an alarm is.
 */
#include <stdbool.h>

#include "internal.h"
#include "pool.h"
#include "task.h"

void cio__t_alarm_init(cio_threaded *t)
{
    (void)t;
}

void cio__t_alarm_fini(cio_threaded *t)
{
    (void)t;
}

bool cio__t_alarm_arm(cio_timeout deadline)
{
    (void)deadline;
    return false;
}

bool cio__t_alarm_fired(void)
{
    return false;
}

void cio__t_alarm_disarm(void)
{
}
