"""A CronJob's cadence as the evaluator reads it: the longest wait its schedule leaves between runs, and why a
CronJob no longer runs on its healthy cadence or its runs can no longer finish."""

from itbench_dsl.runtime.evaluator import cadence_problem
from itbench_dsl.runtime.state import cron_longest_wait

DAY = 1440


def test_longest_wait_of_standard_schedules_and_descriptors():
    assert cron_longest_wait("*/5 * * * *") == 5
    assert cron_longest_wait("2-59/5 * * * *") == 5
    assert cron_longest_wait("17 */2 * * *") == 120
    assert cron_longest_wait("0 0 * * 1-5") == 3 * DAY  # Friday to Monday
    assert cron_longest_wait("0 0 13 * 5") == 7 * DAY  # the 13th or a Friday (both restricted: either)
    assert cron_longest_wait("@hourly") == 60
    assert cron_longest_wait("@every 90s") == 1.5
    assert cron_longest_wait("@yearly") == cron_longest_wait("@annually") == 366 * DAY
    assert cron_longest_wait("0 0 29 2 *") >= 4 * 365 * DAY
    assert cron_longest_wait("0 0 30 2 *") is None
    assert cron_longest_wait("no schedule") == 0


def cronjob(schedule="*/5 * * * *", **job):
    spec = {"schedule": schedule, "jobTemplate": {"spec": {"template": {"spec": {}}, **job}}}
    return {"kind": "CronJob", "metadata": {"namespace": "shop", "name": "report"}, "spec": spec}


HEALTHY = {"schedule": "*/5 * * * *", "activeDeadlineSeconds": 240}


def test_cadence_kept():
    assert cadence_problem(HEALTHY, cronjob()) is None
    assert cadence_problem(HEALTHY, cronjob("1-59/5 * * * *", activeDeadlineSeconds=480)) is None
    assert cadence_problem(HEALTHY, cronjob("* * * * *")) is None


def test_cadence_lost():
    for schedule in ("0 0 29 2 *", "@yearly", "@annually", "17 */2 * * *", "*/5 * 1-15 * *"):
        assert "waits up to" in cadence_problem(HEALTHY, cronjob(schedule)), schedule
    starting = cronjob()
    starting["spec"]["startingDeadlineSeconds"] = 0
    assert "startingDeadlineSeconds" in cadence_problem(HEALTHY, starting)
    assert "below the healthy" in cadence_problem(HEALTHY, cronjob(activeDeadlineSeconds=1))
    assert "suspended" in cadence_problem(HEALTHY, cronjob(suspend=True))
    assert "parallelism" in cadence_problem(HEALTHY, cronjob(parallelism=0))
    assert "completions" in cadence_problem(HEALTHY, cronjob(completions=0))


def test_new_job_deadline_below_a_run():
    healthy = {"schedule": "*/5 * * * *"}
    assert "below 60s" in cadence_problem(healthy, cronjob(activeDeadlineSeconds=1))
    assert cadence_problem(healthy, cronjob(activeDeadlineSeconds=600)) is None
