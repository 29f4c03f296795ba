"""A job in progress as one line: its title and detail, and a progress bar (busy until the total is known)."""

from __future__ import annotations

from PySide6.QtWidgets import QHBoxLayout, QLabel, QProgressBar, QWidget

from .jobs import Job


class JobRow(QWidget):
    def __init__(self, job: Job) -> None:
        super().__init__()
        self.line = layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        self.label = QLabel()
        self.bar = QProgressBar()
        self.bar.setFixedWidth(220)
        layout.addWidget(self.label, 1)
        layout.addWidget(self.bar)
        self.update_job(job)

    def update_job(self, job: Job) -> None:
        self.label.setText(f"{job.title}" + (f" — {job.detail}" if job.detail else ""))
        percent = job.percent
        if percent is None:
            self.bar.setRange(0, 0)  # busy indicator until the total is known
        else:
            self.bar.setRange(0, 100)
            self.bar.setValue(percent)
