"""The What if… page's sections (pages/whatif.py): the modified dataset, merge, edit, include/exclude, store.

Every change goes through :func:`apply` (in button callbacks, before the next run draws the picker): it
updates the session's :class:`metaeval_ui.userdata.WhatIf` and makes it the current dataset. Pending cell edits live
in ``st.session_state`` (kept across page switches) until applied or discarded (with a confirmation).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import streamlit as st

from metaeval_core.data.upload import measure_role
from metaeval_core.data.upload.limits import MAX_MAGNITUDE
from metaeval_core.data.whatif import describe_merge, edit_scores, merge_datasets, with_identity

from metaeval_ui import data, exports, state, userdata, widgets
from metaeval_ui.errors import EXPECTED, escape_markdown, message_of, show_error

PAGE_ROWS = 50  # inputs per page of the score editor
MAX_COLUMNS = 20  # systems shown side by side
PENDING = "_whatif_pending"  # {(system, input, measure): value} edits typed but not applied yet
_EXTRA = "_whatif_extra"  # ((sha256, humans), file name, Dataset | None, measures kept human) the parsed file
GEN = "_whatif_gen"  # bumped by every applied change: fresh uploader / editor / multiselects
CURRENT = "_whatif_current"  # (picker id, Dataset) of this run, for the callbacks
ss = st.session_state

def bump() -> None:
    ss[GEN] = int(ss.get(GEN, 0)) + 1


def apply(make_full=None, *, excluded_systems=None, excluded_inputs=None, step: str) -> bool:
    """Apply one change to the session's modified dataset (created from the current one if needed)."""
    current_id, current = ss[CURRENT]
    existing = userdata.whatif()
    fresh = existing is None or existing.id != current_id
    base = current if fresh else existing.full
    try:
        new_full = make_full(base) if make_full is not None else None
        target = existing
        if fresh:
            target = userdata.WhatIf(base_id=current_id, base_title=current.title or current.id,
                                     base_version=current.version, base=current,
                                     full=with_identity(current, userdata.WHATIF_PREFIX + current_id),
                                     base_lp=userdata.base_language_pair(current_id))
        target.update(full=new_full, excluded_systems=excluded_systems, excluded_inputs=excluded_inputs, step=step)
    except EXPECTED as error:
        userdata.message("error", f"Not applied: {message_of(error)}")
        return False
    ss[userdata._WHATIF] = target
    userdata.autosave(target)  # a reload (or a link on this machine) reopens it
    state.put("dataset", target.id)
    bump()
    userdata.message("success", f"Applied: {step}. Every page now computes on the modified dataset.")
    return True

def status(ds, choice_id: str, found, active: bool) -> bool:
    """The modified dataset: switch back / discard when inactive, the changes so far when active."""
    if found is not None and not active:
        st.info(escape_markdown(
            f"You have a modified dataset based on {found.base_title} ({len(found.steps)} change(s), "
            f"{'saved as ' + found.saved_as if found.saved_as else 'not saved'}) that is not the current dataset. "
            "Switch back to it, or discard it to start over from the current dataset."), icon=":material/science:")
        left, right = st.columns(2)
        left.button("Switch to the modified dataset", key="whatif_switch", icon=":material/swap_horiz:",
                    on_click=lambda: state.put("dataset", found.id))
        confirm = right.checkbox("Discard the modified dataset" + ("" if found.saved_as else " (not saved)"),
                                 key="whatif_discard_confirm")

        def _discard() -> None:
            userdata.discard_whatif()
            ss[PENDING] = {}
            ss.pop("whatif_discard_confirm", None)
            bump()
            userdata.message("info", "The modified dataset was discarded.")

        right.button(f"Discard it and start from {choice_id}", key="whatif_discard", disabled=not confirm,
                     on_click=_discard, icon=":material/delete:")
        can_edit = False
    else:
        can_edit = True

    if active:
        summary = pd.DataFrame(
            {"now": [ds.n_systems, ds.n_inputs, ds.n_judged, len(ds.human_measures), len(ds.metric_measures)]},
            index=["systems", "inputs", "judged inputs", "human measures", "metric measures"])
        st.subheader("Changes so far")
        st.dataframe(pd.DataFrame({"change": found.steps}), hide_index=True, width="stretch")
        st.dataframe(summary, width="stretch")
        exports.collect("Changes", table=pd.DataFrame({"change": found.steps}))
        st.caption(escape_markdown(f"Based on {found.base_id} (version {found.base_version}); this version: "
                                   f"{ds.version}. Excluded: {len(found.excluded_systems)} system(s), "
                                   f"{len(found.excluded_inputs)} input(s)."))
    return can_edit


def merge_section(full, gen: int) -> None:
    """Upload a file, preview what it adds and its conflicts, merge it (keep or replace conflicting cells)."""
    st.caption("Same formats as uploads (wide or long CSV/TSV, SacreROUGE JSONL, Parquet): e.g. new human "
               "judgments for inputs that have only metric scores, a new metric's scores, or a new system's scores. "
               "Systems, inputs and measures are matched by name.")
    st.text_input("Human measures in the file (comma-separated; empty: as in this dataset, else detect)",
                  key="whatif_humans")
    file = st.file_uploader("Extra scores (CSV, TSV, JSON Lines or Parquet)", key=f"whatif_file_{gen}")
    extra, kept = None, ()
    typed_humans = [h.strip() for h in str(ss.get("whatif_humans", "")).split(",") if h.strip()]
    if file is not None:
        raw = file.getvalue()
        typed = typed_humans
        signature = (data.content_sha256(raw), tuple(typed))
        cached = ss.get(_EXTRA)
        if cached is None or cached[0] != signature:
            try:
                parsed = userdata.parse_extra(raw, file.name, human_measures=typed or None)
                kept = ()
                if not typed:  # measures the base calls human stay human
                    known = [m for m in parsed.measures if m in full.measures and full.measures[m].kind == "human"]
                    kept = tuple(m for m in known if parsed.measures[m].kind != "human")
                    if kept:
                        parsed = userdata.parse_extra(raw, file.name, human_measures=sorted(
                            set(known) | set(parsed.human_measures)))
                cached = (signature, file.name, parsed, kept)
            except EXPECTED as error:
                cached = (signature, file.name, None, (), error)
            ss[_EXTRA] = cached
        extra, kept = cached[2], cached[3]
        if extra is None and len(cached) > 4:  # on every rerun while the file is there
            # one sentence here, the whole message (with its kind) one click away
            st.error(escape_markdown(widgets.upload_sentence(file.name, message_of(cached[4]))),
                     icon=":material/block:")
            with st.expander("Why the file was rejected, in full"):
                show_error(cached[4], prefix="File rejected")
    if extra is not None:
        try:  # refused before any union array is built when the merged result would exceed the upload limits
            report = describe_merge(full, extra)
        except EXPECTED as error:
            st.error(escape_markdown(f"This file cannot be merged: {message_of(error)}"), icon=":material/block:")
            return
        cols = st.columns(5)
        for column, (label, value) in zip(cols, (("new systems", len(report.new_systems)),
                                                 ("new inputs", len(report.new_inputs)),
                                                 ("new measures", len(report.new_measures)),
                                                 ("cells filled", report.filled_cells),
                                                 ("conflicting cells", report.n_conflicts))):
            column.metric(label, f"{value:,}")
        details = []
        for label, names in (("New systems", report.new_systems), ("New inputs", report.new_inputs),
                             ("New measures", report.new_measures)):
            if names:
                shown = ", ".join(names[:12]) + (f" … ({len(names)} in all)" if len(names) > 12 else "")
                details.append(f"{label}: {shown}")
        if report.newly_judged_inputs:
            details.append(f"{report.newly_judged_inputs} input(s) get their first human scores")
        roles = [measure_role(extra, m, declared=typed_humans) for m in report.new_measures]
        if kept:  # the file (its 'kind' column, or detection by name) said metric
            details.append(f"Kept as human measures, as in this dataset, although the file says metric: "
                           f"{', '.join(kept)}")
        for line in details + list(report.notes):
            st.caption(escape_markdown(line))
        for role in roles:  # each new measure's role and why, before it is merged (issue 24)
            (st.info if " is a metric" in role else st.caption)(escape_markdown(f"New measure {role}."))
        for lookalike in report.lookalikes:
            st.warning(escape_markdown(lookalike), icon=":material/spellcheck:")
        if report.n_conflicts or report.attribute_conflicts:
            st.warning(escape_markdown(
                f"{report.n_conflicts} cell(s) hold a different number in the file than in the dataset"
                + (f"; {len(report.attribute_conflicts)} system attribute(s) differ" if report.attribute_conflicts
                   else "") + ". Choose which to keep."), icon=":material/warning:")
            if report.conflicts:
                st.dataframe(pd.DataFrame([vars(c) for c in report.conflicts]).rename(
                    columns={"base": "current value", "extra": "file's value"}), hide_index=True, width="stretch")
            # Read by _merge and the preview through its key.
            st.radio("Conflicting cells", ("keep", "replace"), key="whatif_conflict", horizontal=True,
                     format_func={"keep": "keep the current values", "replace": "replace them with the file's"}.get)
        for change in report.annotator_notes(ss.get("whatif_conflict", "keep")):  # said before the merge
            st.warning(escape_markdown(change + "."), icon=":material/groups:")
        if not report.adds_anything:
            st.info("This file adds nothing: every score it holds is already in the dataset.")

        def _merge(extra=extra, name=file.name, summary=report.summary()) -> None:
            chosen = ss.get("whatif_conflict", "keep")
            if apply(lambda base: merge_datasets(base, extra, on_conflict=chosen),
                      step=f"merged {name} ({summary}; conflicts: {chosen})"):
                ss.pop(_EXTRA, None)

        if report.adds_anything:
            merge_preview(full, extra, cached[0], ss.get("whatif_conflict", "keep"))
        st.button("Merge into the dataset", key="whatif_merge", type="primary", icon=":material/merge:",
                  disabled=not report.adds_anything, on_click=_merge)


_PREVIEW = "_whatif_merge_preview"  # (dataset id, version, file signature, policy) -> warnings or the error


def merge_preview(full, extra, signature, policy: str) -> None:
    """The data check of the merged result, before anything is merged (docs/methods.md sec. 17)."""
    from metaeval_core.data.upload import validation_report

    key = (full.id, full.version, signature, policy)
    cached = ss.get(_PREVIEW)
    if cached is None or cached[0] != key:
        try:
            warnings = tuple(w.message for w in validation_report(merge_datasets(full, extra,
                                                                                on_conflict=policy)).warnings)
            before = {w.message for w in validation_report(full).warnings}
            cached = (key, tuple(w for w in warnings if w not in before), None)
        except EXPECTED as error:
            cached = (key, (), error)
        ss[_PREVIEW] = cached
    _, new_warnings, error = cached
    if error is not None:
        st.error(escape_markdown(f"Merging this file would fail: {message_of(error)}"), icon=":material/block:")
        return
    title = (f"Data check of the merged result: {len(new_warnings)} new warning(s)" if new_warnings
             else "Data check of the merged result: no new warnings")
    with st.expander(title, expanded=bool(new_warnings), icon=":material/fact_check:"):
        for message in new_warnings:
            st.warning(escape_markdown(message), icon=":material/warning:")
        if not new_warnings:
            st.caption("The merge adds no warning to those the current dataset already has.")


def edit_section(ds, gen: int, pending: dict) -> None:
    """A paged system x input editor of one measure; edits stay pending until applied."""
    working = ds
    if working.measures:
        c1, c2, c3 = st.columns([2, 3, 1.4])  # the third column holds "Judged inputs only" unclipped
        measures = list(working.measures)
        if ss.get("whatif_edit_measure") not in measures:
            ss["whatif_edit_measure"] = (widgets.default_metrics(working) or measures)[0] \
                if working.metric_measures else measures[0]
        measure = c1.selectbox("Measure", measures, key="whatif_edit_measure")
        kept = [s for s in ss.get("whatif_edit_systems", []) if s in working.systems]
        ss["whatif_edit_systems"] = kept or list(working.systems[:8])
        systems = c2.multiselect("Systems (columns)", working.systems, key="whatif_edit_systems",
                                 max_selections=MAX_COLUMNS, help=f"At most {MAX_COLUMNS} systems side by side.")
        judged_only = c3.checkbox("Judged inputs only", value=bool(working.n_judged), key="whatif_edit_judged",
                                  help="Off: every input, including those with metric scores only.")
        inputs = [j for j, judged in zip(working.inputs, working.judged) if judged or not judged_only]
        n_pages = max(1, math.ceil(len(inputs) / PAGE_ROWS))
        if int(ss.get("whatif_edit_page", 1)) > n_pages:
            ss["whatif_edit_page"] = 1
        page = int(c3.number_input(f"Page (of {n_pages})", min_value=1, max_value=n_pages, step=1,
                                   key="whatif_edit_page"))
        rows = inputs[(page - 1) * PAGE_ROWS: page * PAGE_ROWS]
        if systems and rows:
            sys_index = [working.systems.index(s) for s in systems]
            position = {j: k for k, j in enumerate(working.inputs)}
            matrix = working.measures[measure].scores[np.ix_(sys_index, [position[j] for j in rows])].T
            original = pd.DataFrame(matrix, index=pd.Index(rows, name="input"), columns=list(systems))
            shown = original.copy()
            for (s, j, m), value in pending.items():
                if m == measure and s in shown.columns and j in shown.index:
                    shown.loc[j, s] = value
            editor_key = f"whatif_editor_{gen}_{abs(hash((measure, page, judged_only, tuple(systems))))}"
            edited = st.data_editor(
                shown, key=editor_key, num_rows="fixed", width="stretch",
                column_config={s: st.column_config.NumberColumn(s, format="%.4f") for s in systems})
            for j in rows:
                for s in systems:
                    new, old = edited.loc[j, s], original.loc[j, s]
                    new = float("nan") if new is None or pd.isna(new) else float(new)
                    if (math.isnan(new) and math.isnan(old)) or new == old:
                        pending.pop((s, j, measure), None)
                    else:
                        pending[(s, j, measure)] = new
            st.caption(f"Rows: inputs {(page - 1) * PAGE_ROWS + 1}–{(page - 1) * PAGE_ROWS + len(rows)} of "
                       f"{len(inputs)}; columns: the chosen systems. Type a number, or clear a cell to make it missing. "
                       "Edits stay pending (kept across pages) until you apply them.")
        else:
            st.info("Pick at least one system.", icon=":material/touch_app:")
        bad = [cell for cell, value in pending.items()
               if not math.isnan(value) and not (math.isfinite(value) and abs(value) <= MAX_MAGNITUDE)]
        if pending:
            frame = pd.DataFrame([(s, j, m, v) for (s, j, m), v in pending.items()],
                                 columns=["system", "input", "measure", "new value"])
            st.markdown(f"**{len(pending)} pending edit(s)** (not applied yet):")
            st.dataframe(frame, hide_index=True, width="stretch")
            rated = sorted({m for (_, _, m) in pending if m in working.measures
                            and working.measures[m].annotators is not None})
            if rated:
                st.info(escape_markdown(
                    f"{', '.join(rated)} keep{'s' if len(rated) == 1 else ''} per-annotator scores: applying sets "
                    "every annotator's rating of each edited cell to the new value, so the measure stays their "
                    "mean; the other ratings, the annotator agreement and the human-ceiling rows are kept."),
                    icon=":material/group:")
            a, b, c = st.columns([2, 2, 3])

            def _apply_edits() -> None:
                edits = [(s, j, m, v) for (s, j, m), v in ss.get(PENDING, {}).items()]
                if apply(lambda base: edit_scores(base, edits), step=f"edited {len(edits)} score(s)"):
                    ss[PENDING] = {}

            def _discard_edits() -> None:
                ss[PENDING] = {}
                ss.pop("whatif_discard_edits_confirm", None)
                bump()

            a.button(f"Apply {len(pending)} edit(s)", key="whatif_apply_edits", type="primary", on_click=_apply_edits,
                     icon=":material/check:", disabled=bool(bad))
            confirm = c.checkbox("Discard the pending edits", key="whatif_discard_edits_confirm")
            b.button("Discard edits", key="whatif_discard_edits", disabled=not confirm, on_click=_discard_edits,
                     icon=":material/undo:")
            if bad:
                cells = "; ".join(f"{s} / {j} / {m}" for s, j, m in bad[:5]) + (" …" if len(bad) > 5 else "")
                st.warning(escape_markdown(
                    f"{len(bad)} pending edit(s) cannot be applied: a score must be finite and within "
                    f"±{MAX_MAGNITUDE:g} ({cells}). Change or discard them."), icon=":material/block:")
    else:
        st.info("This dataset has no measures to edit.")


def exclude_section(ds, found, active: bool, gen: int) -> None:
    """Excluded systems and inputs (multiselects; clearing one includes it again)."""
    universe = found.full if active else ds
    now_systems = tuple(found.excluded_systems) if active else ()
    now_inputs = tuple(found.excluded_inputs) if active else ()
    sys_key, inp_key = f"whatif_ex_systems_{gen}", f"whatif_ex_inputs_{gen}"
    if sys_key not in ss:
        ss[sys_key] = list(now_systems)
    if inp_key not in ss:
        ss[inp_key] = list(now_inputs)
    left, right = st.columns(2)
    ex_systems = left.multiselect("Excluded systems", universe.systems, key=sys_key,
                                  help="Left out of every analysis; clear to include them again.")
    labels = {j: f"{j} (judged)" if judged else str(j) for j, judged in zip(universe.inputs, universe.judged)}
    ex_inputs = right.multiselect("Excluded inputs", universe.inputs, key=inp_key, format_func=labels.get)
    changed = set(ex_systems) != set(now_systems) or set(ex_inputs) != set(now_inputs)

    def _exclude(sys_key=sys_key, inp_key=inp_key) -> None:
        systems_out, inputs_out = list(ss.get(sys_key, [])), list(ss.get(inp_key, []))
        apply(excluded_systems=systems_out, excluded_inputs=inputs_out,
               step=f"excluded {len(systems_out)} system(s) and {len(inputs_out)} input(s)")

    st.button("Apply inclusion / exclusion", key="whatif_exclude", disabled=not changed, on_click=_exclude,
              icon=":material/filter_alt:")


def download_section(ds) -> None:
    """The current dataset as a long CSV that the sidebar upload reads back (built only when clicked)."""
    from metaeval_core.data.upload import check_long_export, dataset_to_long_frame, safe_csv

    try:
        check_long_export(ds)
    except ValueError as error:
        st.caption(escape_markdown(f"No download: {message_of(error)}"))
        return
    exports.deferred_download(
        "Download this dataset (CSV, long format)", lambda: safe_csv(dataset_to_long_frame(ds)),
        exports.file_name(ds.id, "scores-long"), key="whatif_download",
        help="One row per system, input, measure (and annotator) and score, with the measure's kind (human or "
             "metric); built when you click.")
    st.caption(escape_markdown(
        "Upload it again in the sidebar ('Upload your own scores') to get the same systems, inputs, scores, "
        "per-annotator scores, system attributes, human/metric measures and texts, with nothing to type; "
        "excluded systems and inputs are not in it. Not carried: the title, description, citation, licence "
        "and notes, and annotator names (annotators are numbered)."))


def _deleted(key: str) -> bool:
    """Delete a stored entry; False (with the reason shown) if it cannot be."""
    try:
        userdata.store().delete(key)
    except EXPECTED as error:
        userdata.message("error", f"Not deleted: {message_of(error)}")
        return False
    return True


def damaged_section(damaged) -> None:
    """Stored files that cannot be read: each named with its reason, and a button to delete it."""
    if not damaged:
        return
    st.warning(f"{len(damaged)} stored file(s) cannot be read and are left out of the list below; the other "
               "stored datasets are unaffected.")

    def _delete_damaged(key: str) -> None:
        if _deleted(key):
            userdata.message("info", f"Deleted the damaged file {key}.npz.")

    for d in damaged:
        c1, c2 = st.columns([4, 1], vertical_alignment="center")
        c1.markdown(escape_markdown(f"Damaged: {d.key}.npz ({d.size:,} bytes): {d.reason}"))
        c2.button("Delete", key=f"store_delete_damaged_{d.key}", on_click=_delete_damaged, args=(d.key,),
                  icon=":material/delete:")


def store_section(ds, found, active: bool) -> None:
    """Save the current dataset; list, load, rename and delete stored datasets."""
    store = userdata.store()
    st.caption(escape_markdown(f"Saved on this machine in {store.root} (set METAEVAL_STORE_DIR to change it); "
                               "they stay across restarts and appear in the sidebar's dataset picker as 'Stored: …'."))
    if "store_name" not in ss:
        ss["store_name"] = (found.base_title + " what-if") if active else (ds.title or ds.id)
    s1, s2, s3 = st.columns([3, 1, 1.6], vertical_alignment="bottom")  # room for the whole button label
    s1.text_input("Name", key="store_name")
    s2.checkbox("Overwrite", key="store_overwrite", help="Replace a stored dataset of the same name.")


    def _save() -> None:
        current_id, current = ss[CURRENT]
        name = str(ss.get("store_name", "")).strip()
        try:
            entry = userdata.store().save(current, name, overwrite=bool(ss.get("store_overwrite")))
        except EXPECTED as error:
            userdata.message("error", f"Not saved: {message_of(error)}")
            return
        target = userdata.whatif()
        if target is not None and target.id == current_id:
            target.saved_as = entry.key
        ss.pop("store_overwrite", None)
        userdata.message("success", f"Saved the current dataset as '{entry.name}' ({userdata.USER_PREFIX}{entry.key}).")


    s3.button("Save the current dataset", key="store_save", on_click=_save, icon=":material/save:")
    download_section(ds)

    entries = userdata.stored_entries()
    damaged_section(userdata.damaged_entries())
    if not entries:
        st.caption("No stored dataset yet.")
    else:
        listing = pd.DataFrame([{"name": e.name, "id": userdata.USER_PREFIX + e.key, "systems": e.n_systems,
                                 "inputs": e.n_inputs, "measures": e.n_measures,
                                 "saved": pd.Timestamp(e.saved_at, unit="s").strftime("%Y-%m-%d %H:%M")}
                                for e in entries])
        st.dataframe(listing, hide_index=True, width="stretch")
        by_key = {e.key: e for e in entries}
        if ss.get("store_pick") not in by_key:
            ss["store_pick"] = entries[0].key
        pick = st.selectbox("Stored dataset", list(by_key), key="store_pick",
                            format_func=lambda k: f"{by_key[k].name} ({userdata.USER_PREFIX}{k})")
        m1, m2, m3 = st.columns(3)

        def _load(key: str) -> None:
            state.put("dataset", userdata.USER_PREFIX + key)
            userdata.message("info", f"Loaded {userdata.USER_PREFIX}{key}.")

        m1.button("Load as the current dataset", key="store_load", on_click=_load, args=(pick,),
                  icon=":material/upload_file:")

        def _rename(key: str) -> None:
            new_name = str(ss.get("store_new_name", "")).strip()
            try:
                entry = userdata.store().rename(key, new_name)
            except EXPECTED as error:
                userdata.message("error", f"Not renamed: {message_of(error)}")
                return
            if state.get("dataset") == userdata.USER_PREFIX + key:
                state.put("dataset", userdata.USER_PREFIX + entry.key)
            target = userdata.whatif()
            if target is not None and target.saved_as == key:
                target.saved_as = entry.key
            ss["store_pick"] = entry.key
            ss["store_new_name"] = ""
            userdata.message("success", f"Renamed to '{entry.name}' ({userdata.USER_PREFIX}{entry.key}).")

        m2.text_input("New name", key="store_new_name")
        m2.button("Rename", key="store_rename", on_click=_rename, args=(pick,), icon=":material/edit:")

        def _delete(key: str) -> None:
            if not _deleted(key):
                return
            if state.get("dataset") == userdata.USER_PREFIX + key:
                state.put("dataset", None)
            target = userdata.whatif()
            if target is not None and target.saved_as == key:
                target.saved_as = None
            ss.pop("store_delete_confirm", None)
            ss.pop("store_pick", None)
            userdata.message("info", f"Deleted the stored dataset {userdata.USER_PREFIX}{key}.")

        sure = m3.checkbox("Delete it for good", key="store_delete_confirm")
        m3.button("Delete", key="store_delete", disabled=not sure, on_click=_delete, args=(pick,),
                  icon=":material/delete:")
