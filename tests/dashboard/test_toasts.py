"""The results of actions as toasts, in Chromium against the local stack: one region for the app (the
landmark "Notifications" holding a polite live region, there before any toast), where a toast
appears after an action without taking the focus, can be dismissed, and goes by itself; it slides in
only when reduced motion is not asked for. Errors stay where the action was."""

from __future__ import annotations

import re

from playwright.sync_api import expect

from tests.support.dashboard import check_page, open_dialog, row_action, toast

REGION_FOCUSED = "() => document.querySelector('section.toasts').contains(document.activeElement)"


def test_a_toast_tells_an_action_s_result_politely_is_dismissed_and_goes_by_itself(page, dashboard):
    account = dashboard.new_account()
    dashboard.sign_in(page, account, "/projects")
    region = page.get_by_role("region", name="Notifications")
    live = region.get_by_role("status")
    expect(live).to_have_attribute("aria-live", "polite")   # there, empty, before any toast
    expect(live).to_have_attribute("aria-atomic", "false")
    expect(live.get_by_test_id("toast")).to_have_count(0)

    dialog = open_dialog(page, "Create project", "Create a project")
    dialog.get_by_label("Name").fill("Apollo")
    dialog.get_by_role("button", name="Create project").click()
    created = toast(page, "Project Apollo created.")
    expect(created).to_be_visible()
    # the focus went back to the button that opened the dialog, not to the toast
    expect(page.get_by_role("button", name="Create project")).to_be_focused()
    assert page.evaluate(REGION_FOCUSED) is False
    expect(page.get_by_role("main").locator(".success")).to_have_count(0)
    check_page(page, "projects-toast", every_impact=True)

    # a second result beside the first; Dismiss takes one away at once
    row_action(page, page.get_by_role("row", name=re.compile("Apollo")), "Delete…")
    page.get_by_role("dialog").get_by_role("button", name="Delete").click()
    deleted = toast(page, "Project Apollo deleted.")
    expect(deleted).to_be_visible()
    expect(live.get_by_test_id("toast")).to_have_count(2)
    created.get_by_role("button", name="Dismiss").click()
    expect(created).to_have_count(0)
    expect(deleted).to_be_visible()
    # and the other goes by itself once nothing holds it (the pointer moved off the region)
    page.mouse.move(5, 5)
    expect(deleted).to_have_count(0, timeout=20_000)
    assert page.problems == []


def test_a_toast_slides_in_only_when_reduced_motion_is_not_asked_for(page, dashboard):
    account = dashboard.new_account()
    dashboard.sign_in(page, account, "/projects")
    animation = "el => getComputedStyle(el).animationName"
    for motion, expected, name in (("no-preference", "toast-in", "Moving"), ("reduce", "none", "Still")):
        page.emulate_media(reduced_motion=motion)
        dialog = open_dialog(page, "Create project", "Create a project")
        dialog.get_by_label("Name").fill(name)
        dialog.get_by_role("button", name="Create project").click()
        told = toast(page, f"Project {name} created.")
        expect(told).to_be_visible()
        assert told.evaluate(animation) == expected, motion


def test_an_error_stays_where_the_action_was_with_its_request_id_and_no_toast(page, dashboard):
    account = dashboard.new_account()
    dashboard.sign_in(page, account, "/projects")
    dialog = open_dialog(page, "Create project", "Create a project")
    dialog.get_by_label("Name").fill("   ")   # the browser lets spaces through; the service refuses a blank name
    dialog.get_by_role("button", name="Create project").click()
    expect(dialog.get_by_role("alert")).to_contain_text("VALIDATION_ERROR")
    expect(dialog.get_by_role("alert")).to_contain_text(re.compile(r"Request id: \S+"))
    expect(page.get_by_role("region", name="Notifications").get_by_test_id("toast")).to_have_count(0)
