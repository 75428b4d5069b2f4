/**
 * Waiting helpers (waitFor, findBy…) look for up to 10 s instead of testing-library's 1 s: the
 * tests run beside the browser and server tests on a shared machine, where a render can take longer
 * than a second. A wait ends as soon as what it waits for holds, so a passing test is no slower.
 */
import { configure } from "@testing-library/preact";

configure({ asyncUtilTimeout: 10_000 });
