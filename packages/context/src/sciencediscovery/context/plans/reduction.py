"""Reduction steps (trim, compress) and the diff audit every change passes."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..grouping import USER_TURN, Grouping, GroupingError, group_messages, messages_from_entries, split_recent
from .errors import PlanDefinitionError, PreservedTailTooLargeError, ProtectedFragmentError, ReductionError
from .events import FragmentChange
from .fragments import ContextFragment, ContextPlan, FragmentRole, json_chars
from .handlers import CompressionJob, Compressor, HandlerContext
from .policy import CompressStep, Step, TrimStep

__all__ = ["audit_plan_change", "check_step", "compress_fragment", "step_target", "trim_fragment"]


def step_target(step: Step, fragment: ContextFragment) -> int:
    """The step's ``target_chars``, defaulting to the fragment's ``max_chars`` (0 is a real target)."""
    target = step.target_chars if step.target_chars is not None else fragment.max_chars
    if target is None:
        raise PlanDefinitionError(f"{step.id}.target_chars", f"unset and fragment {fragment.id!r} has no max_chars")
    return target


def _history_field(fragment: ContextFragment, field: str, step_id: str) -> list[Any]:
    if field not in fragment.fields:
        raise PlanDefinitionError(f"{step_id}.field", f"fragment {fragment.id!r} has no field {field!r}")
    value = fragment.fields[field]
    if not isinstance(value, list):
        raise PlanDefinitionError(f"{step_id}.field", f"{fragment.id}.{field} is not a list of history entries")
    return list(value)


def check_step(plan: ContextPlan, step: Step, compressors: Mapping[str, Compressor]) -> None:
    """Validate a step against the plan's protection boundaries and the registered handlers."""
    fragment = plan.fragment(step.fragment_id)
    if not plan.is_mutable(fragment.id):
        raise ProtectedFragmentError(fragment.id, f"is immutable; step {step.id!r} cannot change it")
    step_target(step, fragment)
    if isinstance(step, TrimStep):
        _history_field(fragment, step.field, step.id)
    else:
        if step.handler_id not in compressors:
            raise PlanDefinitionError(f"{step.id}.handler_id", f"no compressor {step.handler_id!r} is registered")
        if step.preserve is not None:
            _history_field(fragment, step.preserve.field, step.id)


def _groups(entries: Sequence[Any], grouping: Grouping, field: str) -> list[list[Any]]:
    """Entries grouped like their messages (raises :class:`GroupingError`)."""
    groups = group_messages(messages_from_entries(entries, field=field), grouping, field=field)
    result: list[list[Any]] = []
    start = 0
    for group in groups:
        result.append(list(entries[start : start + len(group)]))
        start += len(group)
    return result


def trim_fragment(fragment: ContextFragment, step: TrimStep) -> ContextFragment:
    """Drop the fewest oldest complete groups so the fragment's JSON length meets the target.

    At least ``keep_groups`` groups stay; if the target is still missed the result keeps
    them whole (a single message is never cut) and the hard limit decides later.
    """
    target = step_target(step, fragment)
    field = f"{fragment.id}.{step.field}"
    groups = _groups(_history_field(fragment, step.field, step.id), step.grouping, field)
    fields = fragment.fields_copy()
    fields[step.field] = []
    empty = json_chars(fields)
    sizes = [sum(json_chars(entry) + 1 for entry in group) for group in groups]  # each entry and its comma
    kept = sum(sizes)
    drop = 0
    while drop < len(groups) - step.keep_groups and empty + kept - (1 if kept else 0) > target:
        kept -= sizes[drop]
        drop += 1
    fields[step.field] = [entry for group in groups[drop:] for entry in group]
    return fragment.with_fields(fields)


def _check_history(entries: Any, grouping: Grouping, field: str, step_id: str) -> list[Any]:
    try:
        _groups(entries, grouping, field)
    except GroupingError as error:
        raise ReductionError(step_id, f"result breaks the grouping of {field}: {error}") from None
    return list(entries)


async def compress_fragment(
    fragment: ContextFragment, step: CompressStep, compressor: Compressor, context: HandlerContext
) -> ContextFragment:
    """Compress through ``compressor``; with ``preserve`` only the old segment is sent and the tail stitched back.

    The returned old segment must be valid user-turn history (it opens with a user message);
    the tail keeps its groups unchanged. Raises :class:`PreservedTailTooLargeError` when the
    kept tail alone misses the target.
    With no old segment the compressor is not called and the fragment is returned unchanged.
    """
    target = step_target(step, fragment)
    fields = fragment.fields_copy()
    tail: list[Any] = []
    if step.preserve is not None:
        name = step.preserve.field
        entries = _history_field(fragment, name, step.id)
        try:
            split = split_recent(
                messages_from_entries(entries, field=f"{fragment.id}.{name}"),
                step.preserve.keep_groups,
                step.preserve.grouping,
                field=f"{fragment.id}.{name}",
            )
        except GroupingError as error:
            raise ReductionError(step.id, f"cannot group for preservation: {error}") from None
        old, tail = entries[: len(split.old)], entries[len(split.old) :]
        tail_chars = json_chars({**fields, name: tail})
        if tail_chars > target:
            kept = f"the last {split.recent_groups} group(s) of {fragment.id}.{name}"
            raise PreservedTailTooLargeError(step.id, f"{kept} measure {tail_chars} chars, over the target {target}")
        if not old:
            return fragment
        fields[name] = old
    job = CompressionJob(step.id, fragment.with_fields(fields), target, json_chars(tail) if tail else 0)
    result = await context.signal.run(compressor.compress(job, context), f"compressor {compressor.id}")
    if not isinstance(result, Mapping) or set(result) != set(fields):
        raise ReductionError(step.id, f"compressor must return the fields {sorted(fields)}")
    new_fields = dict(result)
    if step.preserve is not None:
        name = step.preserve.field
        summary = _check_history(new_fields[name], USER_TURN, f"{fragment.id}.{name}", step.id)
        new_fields[name] = [*summary, *tail]
    elif fragment.role is FragmentRole.HISTORY:
        for name, entries in new_fields.items():
            _check_history(entries, USER_TURN, f"{fragment.id}.{name}", step.id)
    try:
        return fragment.with_fields(new_fields)
    except PlanDefinitionError as error:
        raise ReductionError(step.id, f"compressor result is not JSON: {error}") from None


def audit_plan_change(
    before: Sequence[ContextFragment], after: ContextPlan, allowed: frozenset[str], actor: str
) -> tuple[FragmentChange, ...]:
    """Check ``after`` against ``before``: same fragments and identities, only ``allowed`` ids changed, none grew.

    ``actor`` is the step id, or ``"application"`` for audit mode.
    """
    if [f.id for f in before] != [f.id for f in after.fragments]:
        raise ProtectedFragmentError(
            ",".join(f.id for f in after.fragments), f"{actor} changed the set or order of fragments"
        )
    changes = []
    for old, new in zip(before, after.fragments, strict=True):
        if old.identity != new.identity:
            raise ProtectedFragmentError(old.id, f"{actor} changed its source, role, trust, lifetime or max_chars")
        if dict(old.fields) == dict(new.fields):
            continue
        if old.id not in allowed:
            raise ProtectedFragmentError(old.id, f"is immutable; {actor} cannot change it")
        if new.chars > old.chars:
            raise ReductionError(actor, f"fragment {old.id!r} grew from {old.chars} to {new.chars} chars")
        changes.append(FragmentChange(old.id, None if actor == "application" else actor, old.chars, new.chars))
    return tuple(changes)
