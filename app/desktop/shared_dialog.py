"""The dialog that adds a shared workspace: a prefix of an S3-compatible bucket that a team's machines share.

The form is checked on the spot (a bucket location, an endpoint URL); the bucket is then contacted in a job, and
the dialog stays open with the reason when it refuses (wrong key, no such bucket, unreachable): nothing is
registered until the bucket has answered. The secret key goes to the OS keyring, never to a file.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QLabel,
    QLineEdit,
    QVBoxLayout,
    QWidget,
)

from engram.core import EngramError
from engram.core.store.bucket_access import BucketCredentials
from engram.core.store.location import BucketLocation, http_caution
from engram.core.workspaces import WorkspacePlace

if TYPE_CHECKING:
    from .jobs import Job, Jobs

INTRO = ("A shared workspace lives in a bucket your team already has (AWS S3, MinIO, Ceph, Cloudflare R2, …). "
         "Everyone who adds the same bucket location finds and adds to the same memories. Ask whoever runs the "
         "storage for the bucket location and an access key.")


def _field(placeholder: str, name: str, *, secret: bool = False) -> QLineEdit:
    edit = QLineEdit()
    edit.setPlaceholderText(placeholder)
    edit.setAccessibleName(name)
    if secret:
        edit.setEchoMode(QLineEdit.EchoMode.Password)
    return edit


class SharedWorkspaceDialog(QDialog):
    """Name, bucket location, endpoint, region and (optionally) an access key; Add contacts the bucket in a job."""

    def __init__(self, parent: QWidget, jobs: Jobs, add: Callable[[str, BucketLocation, BucketCredentials | None],
                                                                   WorkspacePlace],
                 on_added: Callable[[WorkspacePlace], None]) -> None:
        """``add`` registers the workspace (``Engine.add_shared_workspace``; it runs in a job); ``on_added`` is
        told on the Qt thread once it is registered."""
        super().__init__(parent)
        self.setWindowTitle("Add a shared workspace")
        self.setAccessibleName("Add a shared workspace")
        self._jobs = jobs
        self._add = add
        self._on_added = on_added
        self.name = _field("team", "Workspace name")
        self.uri = _field("s3://acme-team-memory/engram", "Bucket location")
        self.endpoint = _field("https://minio.example.com (leave empty for AWS S3)", "Endpoint")
        self.region = _field("us-east-1", "Region")
        self.key_id = _field("leave empty to use AWS_ACCESS_KEY_ID", "Access key ID")
        self.secret = _field("kept in the OS keyring", "Secret access key", secret=True)
        intro = QLabel(INTRO)
        intro.setWordWrap(True)
        form = QFormLayout()
        for label, edit in (("Name:", self.name), ("Bucket:", self.uri), ("Endpoint:", self.endpoint),
                            ("Region:", self.region), ("Access key ID:", self.key_id), ("Secret key:", self.secret)):
            form.addRow(label, edit)
        self.message = QLabel("")
        self.message.setWordWrap(True)
        self.message.setAccessibleName("Why the workspace was not added")
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Cancel)
        self.add_button = self.buttons.addButton("Add", QDialogButtonBox.ButtonRole.AcceptRole)
        self.add_button.setAccessibleName("Add the shared workspace")
        self.add_button.setDefault(True)
        self.buttons.accepted.connect(self.submit)
        self.buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(intro)
        layout.addLayout(form)
        layout.addWidget(self.message)
        layout.addWidget(self.buttons)

    def submit(self) -> None:
        """Check the form, then contact the bucket in a job (the dialog stays open until it answers)."""
        name = self.name.text().strip()
        try:
            location = BucketLocation.parse(self.uri.text(), endpoint=self.endpoint.text(), region=self.region.text())
        except EngramError as exc:
            self.message.setText(exc.message)
            return
        if not name:
            self.message.setText("Give the workspace a name, e.g. team.")
            return
        key_id, secret = self.key_id.text().strip(), self.secret.text().strip()
        if bool(key_id) != bool(secret):
            self.message.setText("Give both the access key ID and its secret, or neither (then Engram uses "
                                 "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY from its environment).")
            return
        credentials = BucketCredentials(key_id, secret) if key_id else None
        self.add_button.setEnabled(False)
        caution = http_caution(location)
        self.message.setText(f"Contacting {location.describe()}…" + (f"\n{caution}" if caution else ""))
        self._jobs.submit("task", f"Add shared workspace {name}",
                          lambda report: self._add(name, location, credentials), on_done=self._answered)

    def _answered(self, job: Job) -> None:
        self.add_button.setEnabled(True)
        if job.error is not None:
            self.message.setText(f"{job.error.title}: {job.error.message}")
            return
        self.secret.clear()
        self._on_added(job.result)
        self.accept()
