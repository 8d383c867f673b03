"""The session's modified ("what if") dataset and the local store of user datasets, for the dataset picker.

* A what-if dataset lives in the session only (:class:`WhatIf`): a base dataset (its picker id), the
  ``full`` modified dataset (merges and edits applied) and the excluded systems/inputs. Its picker id and
  dataset id are ``whatif:<base id>``; its version is the content fingerprint, so every cached
  computation keyed on ``(id, version)`` recomputes after each change.
* Stored datasets (``metaeval_core.data.store``, folder ``$METAEVAL_STORE_DIR`` or ``data/user``) appear in
  the picker as ``user:<key>`` and survive restarts.
* :func:`banner` is drawn on every page while a what-if dataset is active, with a confirmed revert.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field
from pathlib import Path

import streamlit as st

from metaeval_core.data.dataset import Dataset, DatasetError
from metaeval_core.data.store import DamagedEntry, DatasetStore, StoredDataset, StoreError, default_store_dir
from metaeval_core.data.whatif import include_exclude, with_identity

from metaeval_ui import data, state
from metaeval_core.wording import clause, sentence
from metaeval_ui.errors import escape_markdown

WHATIF_PREFIX = "whatif:"
USER_PREFIX = "user:"
_WHATIF = "_whatif"
_MESSAGES = "_whatif_messages"


# -- the what-if dataset -------------------------------------------------------------------------------------


@dataclass
class WhatIf:
    """A modified copy of a base dataset, kept in the session until saved, reverted or replaced."""

    base_id: str
    base_title: str
    base_version: str
    full: Dataset  # merges and edits applied, nothing excluded (id: whatif:<base id>)
    excluded_systems: tuple[str, ...] = ()
    excluded_inputs: tuple[str, ...] = ()
    steps: list[str] = field(default_factory=list)
    saved_as: str | None = None  # store key, when saved since the last change
    # The autosaved draft the URL names (parameter 'draft'). A draft is written once and never overwritten: each
    # change writes a new one under a new token, so a link pins the state it was copied from, and two tabs that
    # opened one link fork apart on their first change instead of replacing each other's draft.
    token: str = ""
    own_tokens: list[str] = field(default_factory=list)  # the drafts this session wrote (a revert deletes these)
    restored: bool = False  # rebuilt from its draft after a reload or from a link
    base: Dataset | None = None  # the unmodified dataset: its data check is what the changes are compared with
    base_lp: str | None = None  # the base's language pair on a test set with several (wmt23): a draft reopens on it
    _dataset: Dataset | None = None

    @property
    def id(self) -> str:
        return WHATIF_PREFIX + self.base_id

    @property
    def dataset(self) -> Dataset:
        """The modified dataset the pages compute on (exclusions applied)."""
        if self._dataset is None:
            subset = include_exclude(self.full, exclude_systems=self.excluded_systems,
                                     exclude_inputs=self.excluded_inputs, id=self.id)
            self._dataset = with_identity(subset, self.id, title=f"{self.base_title} (what if)")
        return self._dataset

    def update(self, *, full: Dataset | None = None, excluded_systems=None, excluded_inputs=None,
               step: str = "") -> None:
        """Change the modified dataset (validated before anything is replaced)."""
        new_full = with_identity(full, self.id) if full is not None else self.full
        systems = tuple(self.excluded_systems if excluded_systems is None else excluded_systems)
        inputs = tuple(self.excluded_inputs if excluded_inputs is None else excluded_inputs)
        systems = tuple(s for s in systems if s in set(new_full.systems))
        inputs = tuple(j for j in inputs if j in set(new_full.inputs))
        subset = include_exclude(new_full, exclude_systems=systems, exclude_inputs=inputs, id=self.id)
        self.full, self.excluded_systems, self.excluded_inputs = new_full, systems, inputs
        self._dataset = with_identity(subset, self.id, title=f"{self.base_title} (what if)")
        if step:
            self.steps.append(step)
        self.saved_as = None


def whatif() -> WhatIf | None:
    found = st.session_state.get(_WHATIF)
    return found if isinstance(found, WhatIf) else None


def base_language_pair(base_id: str) -> str | None:
    """The sidebar's language pair when ``base_id`` is a test set with several (wmt23), else None."""
    return state.get("lp") if data.language_pairs(base_id) else None


def discard_whatif() -> None:
    found = st.session_state.pop(_WHATIF, None)
    if isinstance(found, WhatIf):
        for token in found.own_tokens:  # never a draft restored from a link: another tab may be using it
            delete_draft(token)
    state.put("draft", None)


# -- autosaved drafts: a reload, or a link on this machine, reopens the unsaved modified dataset ------------------
DRAFT_MAX_AGE = 14 * 24 * 3600.0  # seconds an untouched draft is kept
DRAFT_MAX_COUNT = 200  # drafts kept on this machine (newest first): every change writes one


def _drafts() -> DatasetStore:
    return DatasetStore(default_store_dir() / "drafts")  # a folder of its own: never listed as stored datasets


def autosave(found: WhatIf) -> None:
    """Save the modified dataset as a new draft (its ``full`` data, exclusions and steps) and put its token in the
    URL, so a reload or a link opened on this machine rebuilds it (:func:`restore_draft`)."""
    try:
        save_draft(found)
    except (OSError, DatasetError) as error:
        message("warning", f"The modified dataset could not be autosaved ({error}): a reload would lose it. Save "
                           "it to the store (What if…, section 4) to keep it.")
        return
    state.put("draft", found.token)


def save_draft(found: WhatIf) -> None:
    """Write ``found`` as a new draft under a fresh token (``draft-<token>.npz`` and ``.json``: base, exclusions,
    steps), atomically under the store lock, and make it ``found.token``; drafts untouched for two weeks, and
    beyond the newest DRAFT_MAX_COUNT, are removed. No draft is ever overwritten."""
    drafts = _drafts()
    meta = {"base_id": found.base_id, "base_title": found.base_title, "base_version": found.base_version,
            "excluded_systems": list(found.excluded_systems), "excluded_inputs": list(found.excluded_inputs),
            "steps": list(found.steps), "saved_as": found.saved_as, "base_lp": found.base_lp,
            # The base's own systems and inputs: a base shown with a subset (WMT's systems, HANNA's models, a
            # domain) has another version than the whole dataset, and a restored draft rebuilds that subset.
            "base_systems": None if found.base is None else list(found.base.systems),
            "base_inputs": None if found.base is None else list(found.base.inputs)}
    for _attempt in range(3):  # a token taken already (48 random bits: practically never): draw another
        token = secrets.token_hex(6)
        try:
            drafts.save_with_sidecar(found.full, f"what-if draft {token}", key=f"draft-{token}", sidecar=meta)
            break
        except StoreError:
            if _attempt == 2:
                raise
    found.token = token
    found.own_tokens.append(token)
    drafts.prune("draft-", max_age_seconds=DRAFT_MAX_AGE, keep_newest=DRAFT_MAX_COUNT)


def delete_draft(token: str) -> None:
    try:
        _drafts().delete_with_sidecar(f"draft-{token}")
    except (OSError, DatasetError):
        pass


def restore_draft(wanted: str | None, token: str | None) -> bool:
    """Rebuild the session's modified dataset from its autosaved draft when the URL asks for ``whatif:...`` with a
    ``draft`` token and the session has none (a reload, or a link opened on this machine); True when restored."""
    if not is_whatif(wanted) or not token or whatif() is not None:
        return False
    drafts = _drafts()
    key = f"draft-{token}"
    try:
        meta = drafts.load_sidecar(key)
        full = drafts.load(key)
    except (OSError, ValueError, DatasetError):
        return False
    if WHATIF_PREFIX + str(meta.get("base_id")) != wanted:
        return False
    base = None
    lp = meta.get("base_lp") or None  # a draft of a test set with several pairs reopens on its own pair
    try:
        base = _restored_base(data.load_registered(str(meta["base_id"]), data.data_dir_key(), lp), meta)
    except Exception:  # noqa: BLE001 - an upload or stored base: the data check then lists every warning
        base = None
    found = WhatIf(base_id=str(meta["base_id"]), base_title=str(meta.get("base_title", meta["base_id"])),
                   base_version=str(meta.get("base_version", "")), full=with_identity(full, wanted),
                   steps=[str(s) for s in meta.get("steps", [])], saved_as=meta.get("saved_as"), token=token,
                   restored=True, base=base, base_lp=lp)
    if lp:  # the sidebar's pair too, so reverting returns to the draft's pair, not the default one
        state.put("lp", lp)
    try:
        found.update(excluded_systems=meta.get("excluded_systems", ()), excluded_inputs=meta.get("excluded_inputs", ()))
    except DatasetError:
        return False
    found.saved_as = meta.get("saved_as")
    st.session_state[_WHATIF] = found
    return True


def _restored_base(loaded: Dataset, meta: dict) -> Dataset | None:
    """The draft's base as it was shown (``base_version``): the loaded dataset, its default system subset (with
    its note), or the subset of the systems and inputs the draft recorded; None when none matches."""
    wanted = meta.get("base_version")
    candidates = [loaded, loaded.with_default_systems()]
    if loaded.conventions is not None:
        candidates.append(loaded.with_default_systems(human_translations=True))
    for candidate in candidates:
        if candidate.version == wanted:
            return candidate
    systems, inputs = meta.get("base_systems"), meta.get("base_inputs")
    if systems or inputs:
        try:
            subset = loaded.subset(systems=systems or None, inputs=inputs or None)
        except (KeyError, ValueError, DatasetError):
            return None
        if subset.version == wanted:
            return subset
    return None


def is_whatif(choice_id: str | None) -> bool:
    return bool(choice_id) and str(choice_id).startswith(WHATIF_PREFIX)


def family(dataset_id: str) -> str:
    """The id a what-if dataset derives from (measure choices are kept between the two)."""
    return dataset_id[len(WHATIF_PREFIX):] if is_whatif(dataset_id) else dataset_id


def message(kind: str, text: str) -> None:
    """A message for the next run (set in callbacks)."""
    st.session_state.setdefault(_MESSAGES, []).append((kind, text))


def show_messages() -> None:
    for kind, text in st.session_state.pop(_MESSAGES, []):
        {"success": st.success, "error": st.error, "warning": st.warning}.get(kind, st.info)(escape_markdown(text))


# -- the store ---------------------------------------------------------------------------------------------


def store() -> DatasetStore:
    return DatasetStore(default_store_dir())


def _signature(root: Path) -> tuple:
    if not root.is_dir():
        return ()
    out = []
    for path in root.glob("*.npz"):
        try:
            stat = path.stat()
        except OSError:
            continue
        out.append((path.name, stat.st_mtime_ns, stat.st_size))
    return tuple(sorted(out))


@st.cache_data(max_entries=16, show_spinner=False)
def _scan(root: str, signature: tuple) -> tuple[list[StoredDataset], list[DamagedEntry]]:
    return DatasetStore(root).scan()


def stored_entries() -> list[StoredDataset]:
    """Every readable stored dataset, newest first (re-read when the folder's files change)."""
    root = default_store_dir()
    return _scan(str(root), _signature(root))[0]


def damaged_entries() -> list[DamagedEntry]:
    """Stored files that cannot be read (truncated, corrupted), each with the reason."""
    root = default_store_dir()
    return _scan(str(root), _signature(root))[1]


@st.cache_resource(max_entries=8, show_spinner="Loading stored dataset…")
def _load(root: str, key: str, mtime_ns: int) -> Dataset:
    return DatasetStore(root).load(key)


def load_stored(key: str) -> Dataset:
    root = default_store_dir()
    path = root / f"{key}.npz"
    try:
        mtime = path.stat().st_mtime_ns
    except OSError:
        raise DatasetError(f"no stored dataset called {key!r} in {root}") from None
    return _load(str(root), key, mtime)


# -- the picker ------------------------------------------------------------------------------------------


def extra_choices() -> dict[str, data.DatasetChoice]:
    """The what-if dataset (if any) and the stored datasets, as picker choices."""
    out: dict[str, data.DatasetChoice] = {}
    found = whatif()
    if found is not None:
        changes = len(found.steps)
        out[found.id] = data.DatasetChoice(found.id, f"What if: {found.base_title} ({changes} change"
                                           f"{'' if changes == 1 else 's'}{'' if found.saved_as else ', unsaved'})")
    try:
        entries = stored_entries()
    except Exception:  # noqa: BLE001 - an unreadable store folder must not break the picker
        entries = []
    for entry in entries:
        out[USER_PREFIX + entry.key] = data.DatasetChoice(USER_PREFIX + entry.key, f"Stored: {entry.name}")
    return out


def owns(choice_id: str) -> bool:
    return is_whatif(choice_id) or str(choice_id).startswith(USER_PREFIX)


def load_choice(choice_id: str) -> Dataset:
    if is_whatif(choice_id):
        found = whatif()
        if found is None or found.id != choice_id:
            raise DatasetError("the modified dataset is no longer in this session")
        return found.dataset
    return load_stored(choice_id[len(USER_PREFIX):])


def missing_note(wanted: str | None, choices) -> str | None:
    """Why a linked dataset of ours is not offered (None when it is, or is not ours)."""
    if not wanted or wanted in choices:
        return None
    if is_whatif(wanted):
        return (f"The link refers to a modified dataset ({wanted}) whose autosaved draft is not on this machine (it "
                "existed only in its own session): the numbers below are the ORIGINAL dataset's, not the modified "
                "ones. Rebuild it on the What if… page, or ask for its downloaded CSV and upload that.")
    if wanted.startswith(USER_PREFIX):
        return (f"The link refers to a stored dataset ({wanted}) that is not in this machine's store: the numbers "
                "below are another dataset's.")
    return None


def renamed(wanted: str | None, choices) -> str | None:
    """The picker id a link's stored dataset has now, when it was renamed since (None otherwise)."""
    if not wanted or wanted in choices or not str(wanted).startswith(USER_PREFIX):
        return None
    try:
        key = store().current_key(wanted[len(USER_PREFIX):])
    except (OSError, DatasetError):
        return None
    now = USER_PREFIX + key if key else None
    return now if now in choices else None


# -- the banner ------------------------------------------------------------------------------------------


def _revert() -> None:
    found = whatif()
    if found is None:
        return
    if not st.session_state.get("whatif_revert_confirm"):
        message("warning", "Tick the box to confirm that the modifications may be discarded.")
        return
    base_id, lp = found.base_id, found.base_lp
    discard_whatif()
    st.session_state.pop("whatif_revert_confirm", None)
    state.put("dataset", base_id)
    if lp:
        state.put("lp", lp)
    message("info", f"Reverted to {base_id}; the modified dataset was discarded.")


def banner(dataset: Dataset) -> None:
    """On every page: say that a modified dataset is active, with a confirmed revert."""
    found = whatif()
    if not is_whatif(dataset.id) or found is None:
        show_messages()
        return
    show_messages()
    steps = "; ".join(found.steps[-3:]) + (" …" if len(found.steps) > 3 else "")
    saved = f" Saved as stored dataset '{found.saved_as}'." if found.saved_as else (
        " Not saved: autosaved as a draft on this machine, so a reload keeps it.")
    if found.restored:
        saved += " Restored from its autosaved draft."
    st.warning(escape_markdown(f"A modified dataset is active: {found.base_title} with {len(found.steps)} "
                               f"change(s) ({steps}), now {dataset.n_systems} systems and {dataset.n_inputs} inputs "
                               f"({dataset.n_judged} judged).{saved} Every page computes on it."),
               icon=":material/science:")
    with st.expander("Revert to the original dataset"):
        st.checkbox("Discard the modifications" + ("" if found.saved_as else " (they are not saved)"),
                    key="whatif_revert_confirm")
        st.button(f"Revert to {found.base_id}", key="whatif_revert", on_click=_revert,
                  disabled=not st.session_state.get("whatif_revert_confirm"), icon=":material/undo:")


# -- the upload report ------------------------------------------------------------------------------------
_REPORTS = "_data_reports"  # session-only: (dataset id, version) -> UploadReport
_MAX_REPORTS = 8


def _report(dataset: Dataset):
    from metaeval_core.data.upload import validation_report

    cache = st.session_state.setdefault(_REPORTS, {})
    key = (dataset.id, dataset.version)
    if key not in cache:
        while len(cache) >= _MAX_REPORTS:
            cache.pop(next(iter(cache)))
        cache[key] = validation_report(dataset)
    return cache[key]


def report_panel(dataset: Dataset) -> None:
    """Before any analysis of an uploaded, merged or stored dataset: what it holds and what looks wrong.

    Warnings (thin systems, constant, flat or duplicated measures) are shown open. On a what-if dataset only the
    warnings its changes added are new: the panel opens for those alone, and lists the original's warnings
    collapsed (they were there before any change, and pushed every page's numbers down for nothing)."""
    if not (str(dataset.id).startswith(data.UPLOAD_PREFIX) or owns(dataset.id)):
        return
    report = _report(dataset)
    found = whatif()
    base = found.base if is_whatif(dataset.id) and found is not None and found.id == dataset.id else None
    before = {w.message for w in _report(base).warnings} if base is not None else set()
    new = [w for w in report.warnings if w.message not in before]
    old = [w for w in report.warnings if w.message in before]
    n = len(new)
    if base is None:
        title = f"Data check: {n} warning(s) to read before the numbers" if n else "Data check: no warnings"
    else:
        title = (f"Data check: {n} new warning(s) from your changes" if n else "Data check: no new warnings"
                 + (f" ({len(old)} the original already had)" if old else ""))
    with st.expander(title, expanded=bool(n), icon=":material/fact_check:"):
        lines = report.lines()
        st.markdown(escape_markdown(lines[0] + "; " + lines[1] + "."))
        for warning in new:
            st.warning(escape_markdown(warning.message), icon=":material/warning:")
        if old:
            st.caption(escape_markdown(f"Already in {found.base_title} before any change: "
                                       + "; ".join(clause(w.message) for w in old) + "."))
        for name, reason in report.human_reasons:
            st.caption(escape_markdown(sentence(f"Human measure {name}: {reason}")))
        for note in report.notes:
            st.caption(escape_markdown(sentence(f"Note: {note}")))
        if any(w.kind == "few-judged-inputs" for w in report.warnings):
            st.dataframe({"system": list(report.systems), "judged inputs": list(report.judged_per_system)},
                         hide_index=True, height=min(400, 38 + 35 * len(report.systems)))


# -- extra files for merging -----------------------------------------------------------------------------


def parse_extra(raw: bytes, name: str, *, human_measures=None) -> Dataset:
    """Parse a file to merge into the current dataset (it may hold one system, or only human/metric scores)."""
    from metaeval_core.data import upload

    options = {"name": name, "dataset_id": f"{data.UPLOAD_PREFIX}{data.content_sha256(raw)[:12]}", "partial": True,
               "limits": upload.UploadLimits.from_environment()}
    if human_measures:
        options["human_measures"] = list(human_measures)
    return upload.read_user_file(raw, **options)
