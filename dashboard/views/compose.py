"""Compose: build a video request from what the chosen model takes, see every problem and the cost
before anything is sent, send it (or a batch of variations), and find it again in the journal."""

from __future__ import annotations

import streamlit as st

from components.common import connection, handoff
from components.compose import form as compose_form
from components.compose import prefill as compose_prefill
from components.compose import render_watch, request_preview
from components.compose import submit as compose_submit
from components.compose.body import check

st.header("Compose")
connection.show_problem()  # a refused base URL: say so here, the form still works offline
client = connection.client()
journal = connection.journal()
compose_prefill.apply(handoff.take(), client, journal)
compose_prefill.show_note()

form_column, request_column = st.columns([3, 2], gap="large")
with form_column:
    form = compose_form.render(client, journal)
plan = check(form.values)
with request_column:
    request_preview.render(plan)
    compose_submit.render(plan, form.values, client, journal)
    render_watch.watch(client)
    request_preview.render_json(plan)
form.messages.fill(plan.mistakes, plan.paths)
