"""The detail comparison (core/upkeep/details.py): which two texts agree on every detail that carries meaning."""

from __future__ import annotations

import pytest

from engram.core.upkeep.details import compare, overlap, says_it_changes
from engram.core.upkeep.tokens import tokens

DIFFER = [
    ("number", "The cluster has 3 nodes", "The cluster has 4 nodes", "3 nodes → 4 nodes"),
    ("number with its unit", "Tokens expire after 30 days", "Tokens expire after 30 weeks", "days → weeks"),
    ("version", "We pin pydantic to 2.7.1", "We pin pydantic to 2.7.2", "2.7.1 → 2.7.2"),
    ("clock time", "Standup is at 9:45", "Standup is at 10:15", "9:45 → 10:15"),
    ("am and pm", "Standup is at 9 am", "Standup is at 9 pm", "9 am → 9 pm"),
    ("date", "The freeze starts on 2026-12-15", "The freeze starts on 2026-12-16", "2026-12-15 → 2026-12-16"),
    ("weekday", "Sprint planning happens every Tuesday", "Sprint planning happens every Thursday",
     "Tuesday → Thursday"),
    ("month", "The lease ends in March", "The lease ends in June", "March → June"),
    ("relative day", "the dentist is this Wednesday", "the dentist is next Wednesday", "this → next"),
    ("frequency", "Backups run daily", "Backups run weekly", "daily → weekly"),
    ("ip and port", "Redis is at 10.0.2.15:6379", "Redis is at 10.0.2.15:6380", "10.0.2.15:6379 → 10.0.2.15:6380"),
    ("path", "The config lives in /etc/app/main.toml", "The config lives in /etc/app/prod.toml",
     "/etc/app/main.toml → /etc/app/prod.toml"),
    ("config key", "Set search.limit to raise results", "Set search.k_per_channel to raise results",
     "search.limit → search.k_per_channel"),
    ("e-mail", "Reach me at leah@gmail.com", "Reach me at leah@fastmail.com", "leah@gmail.com → leah@fastmail.com"),
    ("url", "Docs are at https://docs.example.com/v2", "Docs are at https://docs.example.com/v3",
     "https://docs.example.com/v2 → https://docs.example.com/v3"),
    ("identifier with a digit", "shared note a1 about the zebra project", "shared note a2 about the zebra project",
     "a1 → a2"),
    ("name at a sentence's start", "Alice owns the billing service", "Bob owns the billing service", "Alice → Bob"),
    ("name inside a sentence", "Ask Priya about the outage", "Ask Daniel about the outage", "Priya → Daniel"),
    ("lower-case name", "told bob about the outage", "told alice about the outage", "bob → alice"),
    ("place", "My sister moved to Denver", "My sister moved to Boston", "Denver → Boston"),
    ("environment", "Deploy to staging first", "Deploy to production first", "staging → production"),
    ("negation added", "Caching is enabled", "Caching is not enabled", "'not' added"),
    ("contraction", "The build is green", "The build isn't green", "'not' added"),
    ("switch", "Caching is on", "Caching is off", "on → off"),
    ("always and never", "Always put the pan in the dishwasher", "Never put the pan in the dishwasher",
     "Always → Never"),
    ("only", "Admins can deploy", "Only admins can deploy", "'Only' added"),
    ("a word swapped for another", "I like cilantro", "I hate cilantro", "like → hate"),
    ("a number added", "Deploy server is 10.0.0.5", "Deploy server is 10.0.0.5 on port 22", "'on port 22' added"),
    ("before and after", "No deploys before 15:00", "No deploys after 15:00", "before → after"),
    ("money", "The coffee fund is at $40", "The coffee fund is at $65", "$40 → $65"),
    ("percentage", "Error budget is 0.5%", "Error budget is 1%", "0.5% → 1%"),
    ("an acronym added", "Tickets go to the support queue", "Tickets go to the SRE support queue", "'SRE' added"),
    ("an acronym swapped", "HR owns the laptops", "IT owns the laptops", "HR → IT"),
    ("who speaks", "Nate: Bye Joanna!", "Joanna: Totally! Bye Nate!", "Nate → Joanna"),
    ("who speaks, typed in lower case", "nate: bye joanna!", "Joanna: Totally! Bye Nate!", "nate → Joanna"),
]

AGREE = [
    ("case", "Backups run nightly at 02:00", "BACKUPS RUN NIGHTLY AT 02:00"),
    ("punctuation", "Releases go out on Tuesdays, after the review!", "Releases go out on Tuesdays after the review."),
    ("spacing", "We use  Renovate\nfor dependencies", "We use Renovate for dependencies"),
    ("word order", "Backups run at 02:00 every night", "Every night at 02:00, backups run"),
    ("a filler", "So basically we use Postgres for billing", "We use Postgres for billing"),
    ("a synonym", "The build is quick", "The build is fast"),
    ("a stem", "Alice owns the billing service", "The billing service is owned by Alice"),
    ("a clause with no detail", "We deploy on Fridays", "We deploy on Fridays, as the whole team agreed"),
    ("a number in words", "The password rotates every thirty days", "The password rotates every 30 days"),
    ("a clock time written two ways", "The sync starts at 2 p.m.", "The sync starts at 14:00"),
    ("a span written two ways", "I'll be back in half an hour", "I'll be back in 30 minutes"),
    ("an idiom that negates nothing", "I'm handling the release notes", "I'm handling the release notes, don't worry"),
    ("an abbreviation", "The prod db is slow", "The production database is slow"),
    ("number with its unit glued", "Uploads are capped at 25MB", "Uploads are capped at 25 MB"),
    ("an interjection shouted", "Iris: I have news about my garden.", "OH, Iris: I have news about my garden."),
    ("case turned over", "Jon: Thanks for the support, Nate!", "jON: tHANKS FOR THE SUPPORT, nATE!"),
    ("a set phrase", "We finally moved the backups", "We moved the backups at last"),
    ("the speaker shouted", "Nate: See you Friday!", "NATE: SEE YOU FRIDAY!"),
    ("a label a sentence opens with", "Note: the backups run nightly", "note: the backups run nightly"),
]


@pytest.mark.parametrize(("what", "old", "new", "said"), DIFFER, ids=[d[0] for d in DIFFER])
def test_a_changed_detail_is_a_difference_said_as_written(what: str, old: str, new: str, said: str) -> None:
    difference = compare(old, new)
    assert not difference.agree, what
    assert difference.describe() == said


@pytest.mark.parametrize(("what", "old", "new"), AGREE, ids=[a[0] for a in AGREE])
def test_the_same_fact_said_again_agrees(what: str, old: str, new: str) -> None:
    assert compare(old, new).agree, f"{what}: {compare(old, new).describe()}"


def test_tokens_keep_structured_values_whole_and_give_each_its_family() -> None:
    families = {t.surface: t.family for t in tokens("Alice set upkeep.near_threshold to 0.88 at 10:00 on Monday; "
                                                     "see https://x.io/a and ops@x.io, not /etc/hosts")}
    assert families == {"Alice": "name", "set": "word", "upkeep.near_threshold": "identifier", "to": "word",
                        "0.88": "number", "at": "neutral", "10:00": "number", "on": "word", "Monday": "time",
                        "see": "word", "https://x.io/a": "identifier", "and": "neutral", "ops@x.io": "identifier",
                        "not": "negation", "/etc/hosts": "identifier"}


def test_overlap_and_update_cues() -> None:
    assert overlap("Priya is the tech lead", "Daniel is the tech lead") == pytest.approx(2 * 2 / 6)
    assert overlap("", "") == 1.0
    assert says_it_changes("Standup moved to 10:00 starting Monday")
    assert says_it_changes("We now deploy on Thursdays")
    assert not says_it_changes("We deploy on Thursdays")
