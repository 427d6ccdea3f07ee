import atexit
import os
import shutil
import tempfile
from pathlib import Path

os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
# Ray (tests/agents/jobs/test_cluster.py): a local Ray's processes address each other over loopback only
# (read when ray is first imported), so no test reaches an address but 127.0.0.1
os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")

# Tests write only to temporary folders. Hypothesis keeps its example database in a folder of
# its own for this run (not .hypothesis/ in the checkout), removed at exit.
_HYPOTHESIS_HOME = tempfile.mkdtemp(prefix="longpuzzle-hypothesis-")
atexit.register(shutil.rmtree, _HYPOTHESIS_HOME, ignore_errors=True)
try:
    from hypothesis.configuration import set_hypothesis_home_dir
except ImportError:  # pragma: no cover - hypothesis is in the dev extra
    pass
else:
    set_hypothesis_home_dir(_HYPOTHESIS_HOME)

# The quick subset, `pytest -m "not slow"` (docs/getting-started.md, "Tests"): besides the tests marked slow in their
# own files, these are: the longest of three measured runs of that subset (pytest --durations on
# 2 shared cores), which together took three quarters of its time. Node ids, no parameters.
SLOW = {
    # the longest of the quick subset measured on 2026-12-06 in the evening (3:35 with them; the lab's
    # and the browser app's new tests had pushed it past 3 minutes): 1-5 s each
    "tests/agents/report/test_report.py::test_report_html_links_every_episode_video_and_writes_analytics",
    "tests/agents/diagnose/test_rules.py::test_a_model_agent_answers_probes_in_separate_requests",
    "tests/agents/diagnose/test_checkpoint_sources.py::test_from_runs_finds_the_dead_end_and_the_controls_of_the_won_attempt",
    "tests/agents/serve/test_play_browser.py::test_branch_here_restores_the_state_and_plays_on",
    "tests/agents/diagnose/test_checkpoint_sources.py::test_from_scratch_controls_lie_on_a_verified_solution",
    "tests/agents/serve/test_viewer.py::test_the_viewer_keeps_a_bounded_number_of_documents_annotations_and_graph_states",
    "tests/agents/diagnose/test_branch.py::test_a_move_made_of_two_clicks_branches_from_the_idle_step_before_its_selection",
    "tests/agents/diagnose/test_checkpoint_sources.py::test_plan_segments_reach_certified_boards",
    "tests/agents/harness/test_frame_hash.py::test_the_renderer_gives_row_spans_that_hash_fewer_bands_than_its_boxes",
    "tests/agents/diagnose/test_retry.py::test_a_retry_study_end_to_end_with_a_clue_reader",
    "tests/agents/report/test_report_diagnostics.py::test_a_report_with_runs_and_studies_links_its_diagnostics_and_renders_in_chromium",
    "tests/agents/diagnose/test_takeover.py::test_every_continuation_replays_and_the_study_re_derives",
    "tests/agents/diagnose/test_judge.py::test_a_model_judge_through_a_real_endpoint_sees_the_recorded_screenshot",
    "tests/agents/datasets/test_datasets.py::test_every_episode_replays_to_the_recorded_frames_and_moves",
    "tests/agents/diagnose/test_retry.py::test_endpoints_of_retries",
    "tests/test_cli_usability.py::test_ctrl_c_exits_130_with_one_line",
    "tests/solvers/test_solvers_table.py::test_table_on_keys_of_a_real_search",
    "tests/agents/envs/test_envs.py::test_module_qualified_id_needs_no_import_first",
    "tests/engine/test_gui.py::test_the_engine_side_never_imports_pygame_or_render",
    "tests/agents/diagnose/test_retry.py::test_an_agent_file_retries_from_its_sandbox",
    "tests/agents/diagnose/test_rules.py::test_the_bolt_controller_restarts_a_certified_dead_end",
    "tests/agents/models/test_models.py::test_a_dead_endpoint_is_an_infrastructure_failure_that_resume_reruns",
    # the browser app's tests in chromium (a browser, a recorded run, the oracle: 5-15 s each)
    "tests/agents/serve/test_browser.py::test_every_page_loads_with_no_console_error",
    "tests/agents/serve/test_browser.py::test_the_frame_shown_at_step_k_is_the_stored_frame_of_step_k",
    "tests/agents/serve/test_browser.py::test_the_first_fatal_move_of_a_failed_bolt_episode_is_marked_and_jumped_to",
    "tests/agents/serve/test_browser.py::test_compare_steps_two_episodes_by_step_and_by_progress",
    "tests/agents/serve/test_browser.py::test_hostile_strings_in_a_run_folder_are_shown_as_text_and_run_nothing",
    "tests/agents/serve/test_viewer.py::test_a_model_runs_calls_are_given_to_the_steps_they_made",
    "tests/agents/serve/test_viewer.py::test_the_oracle_is_computed_off_the_request_path_one_at_a_time",
    # live play in the browser (agents/serve/play.py): a real Chromium and server, about 6 s
    "tests/agents/serve/test_play_browser.py::test_a_person_enters_maze_paint_and_wins_a_level_with_the_pointer",
    # the longest of the quick subset as measured on 2026-12-06 (pytest --durations, 3:30 before)
    # (with the docs site's other tests: their module fixture builds the whole site)
    "tests/test_docs_site.py::test_the_site_loads_nothing_from_another_host",
    "tests/test_docs_site.py::test_the_cli_reference_shows_every_command_and_its_help_as_written",
    "tests/test_docs_site.py::test_the_api_reference_documents_the_main_public_objects",
    "tests/test_docs_site.py::test_a_key_page_renders_in_the_browser_with_no_broken_link",
    "tests/agents/harness/test_protocol.py::test_an_action_returned_after_the_deadline_is_not_executed",
    "tests/agents/report/test_report.py::test_the_report_page_renders_in_chromium_without_errors",
    "tests/solvers/test_solvers_table.py::test_reverse_move_precheck_and_batching_keep_results",
    "tests/solvers/test_solvers.py::test_second_process_does_not_recompile_search_kernels",
    "tests/engine/test_suite_intents.py::test_nothing_outside_engine_touches_session_or_suite_internals",
    "tests/test_startup.py::test_a_cold_kernel_cache_is_said_once_on_a_terminal",
    "tests/agents/test_import_circles.py::test_no_import_circle_in_the_package",
    "tests/agents/test_import_circles.py::test_the_graph_holds_function_local_imports_but_not_type_checking_ones",
    "tests/agents/vista/test_mcp.py::test_the_vista_tools_have_the_papers_signatures_through_the_sdk_client",
    "tests/agents/models/test_model_wires.py::test_the_scripted_server_refuses_what_the_real_api_refuses",
    "tests/agents/vista/test_vista_code.py::test_limits_end_the_process_and_the_next_call_starts_afresh",
    "tests/render/test_play_window.py::test_window_loop_saves_an_episode_that_replays",
    "tests/agents/sandbox/test_isolation.py::test_load_errors_are_one_line_and_agent_file_checks",
    "tests/solvers/test_solvers_bolt.py::test_pruned_and_exact_best_first_agree_on_solutions",
    "tests/agents/vista/test_vista_models.py::test_invalid_replies_end_the_episode_and_provider_failures_are_unscored",
    "tests/render/test_lang.py::test_every_button_is_hit_at_its_page_px_in_chinese_as_in_english",
    "tests/solvers/test_solvers_bolt.py::test_a_dead_end_the_predicate_misses_is_certified_by_search",
    "tests/test_cli_usability.py::test_numba_cache_goes_under_the_project_cache_folder",
    "tests/agents/harness/test_presets.py::test_a_model_evaluation_runs_under_the_paper_preset_by_default",
    "tests/test_cli_usability.py::test_verify_result_lines_on_a_terminal_are_not_written_over_the_progress_bar",
    "tests/solvers/test_solvers_table.py::test_prefaulting_another_core_changes_no_state",
    "tests/agents/test_metrics.py::test_metric_orderings",
    "tests/solvers/test_solvers.py::test_small_levels_match_python_brute_force",
    "tests/puzzles/test_bolt_dead_ends.py::test_a_released_pad_rests_on_the_peg_below_and_spends_its_hole",
    "tests/puzzles/test_bolt_dead_ends.py::test_a_resting_piece_falls_on_leaves_or_is_pinned_again",
    "tests/puzzles/test_bolt_dead_ends.py::test_dead_end_with_four_of_24_removed_is_reachable_hard1",
    "tests/puzzles/test_bolt_dead_ends.py::test_paper_opening_then_filling_the_holes_deadlocks_hard1",
    "tests/puzzles/test_bolt_unscrew.py::test_all_sixteen_levels_load_with_the_right_pieces",
    "tests/puzzles/test_bolt_unscrew.py::test_settle_frames_follow_the_kernel",
    "tests/engine/test_catalog_snapshots.py::test_commands_generate_snapshot_levels_verify",
    "tests/engine/test_catalog_snapshots.py::test_envs_over_a_snapshot_of_two_games_lists_and_checks_those_and_skips_the_rest",
    "tests/engine/test_catalog_snapshots.py::test_results_record_the_catalogue_replay_uses_it_and_report_keeps_catalogues_apart",
    "tests/engine/test_catalog_snapshots.py::test_snapshot_versions_hash_and_merge",
    "tests/test_cli_usability.py::test_replay_accepts_a_run_folder_and_sums_up",
    "tests/puzzles/test_color_connect.py::test_reference_paths_replay_to_a_win",
    "tests/agents/testing/test_conformance.py::test_agent_protocol_refuses_any_malformed_reply_with_a_message",
    "tests/agents/testing/test_conformance.py::test_compiled_code_equals_pure_python",
    "tests/agents/testing/test_conformance.py::test_second_process_does_not_recompile",
    "tests/agents/datasets/test_dataset_writer.py::test_a_bands_bytes_depend_on_its_pixels_alone_whatever_the_compressor_did_before",
    "tests/agents/datasets/test_dataset_writer.py::test_deltas_give_the_same_pngs_and_cache_with_fewer_bands_hashed",
    "tests/agents/datasets/test_datasets.py::test_parquet_shards_read_back_with_pyarrow_frames_match_their_hashes",
    "tests/agents/datasets/test_datasets.py::test_the_check_catches_an_altered_shard_and_an_altered_action",
    "tests/agents/datasets/test_determinism.py::test_a_dataset_made_after_this_process_history_is_the_one_a_fresh_process_makes",
    "tests/agents/envs/test_envs.py::test_check_env",
    "tests/agents/envs/test_envs.py::test_check_env_and_envs_check_work_with_no_display_and_no_sdl_driver",
    "tests/agents/envs/test_envs.py::test_importing_the_package_registers_the_ids_lazily",
    "tests/agents/envs/test_envs.py::test_rules_env_pickles_mid_episode_and_renders",
    "tests/agents/testing/test_fuzz.py::test_mutated_level_records_are_refused_or_work",
    "tests/agents/testing/test_fuzz.py::test_randomised_hostile_agents_end_as_planned_and_replay",
    "tests/agents/testing/test_fuzz.py::test_tampered_snapshots_and_checkpoints_are_refused_or_work",
    "tests/solvers/generators/test_generators.py::test_bolt_unscrew_boards_lie_in_the_play_zone_and_anchors_apart",
    "tests/solvers/generators/test_generators.py::test_twenty_generated_levels_fall_inside_the_catalogue_tier",
    "tests/puzzles/test_gui_bolt_unscrew.py::test_tap_points_are_those_of_a_scan_point_by_point",
    "tests/agents/sandbox/test_isolation.py::test_hostile_agent_files_end_cleanly",
    "tests/engine/test_jit.py::test_commands_that_need_compiled_kernels_still_compile",
    "tests/engine/test_jit.py::test_show_and_check_as_python_equal_the_compiled_rules",
    "tests/agents/vista/test_mcp.py::test_a_stdio_client_that_leaves_mid_reply_is_one_log_line",
    "tests/agents/vista/test_mcp.py::test_mcp_over_stdio_plays_an_objective_to_osr_100",
    "tests/agents/vista/test_mcp.py::test_mcp_over_streamable_http_on_localhost",
    "tests/agents/models/test_model_wires.py::test_a_scripted_model_completes_the_objective_through_every_protocol_on_every_wire",
    "tests/agents/models/test_model_wires.py::test_endless_slow_and_huge_replies_are_provider_errors_with_their_reason",
    "tests/agents/models/test_models.py::test_every_protocol_completes_the_objective_through_http",
    "tests/agents/models/test_models.py::test_png_is_lossless_and_views_round_trip_exactly",
    "tests/agents/models/test_models.py::test_sixteen_concurrent_episodes_equal_a_sequential_run",
    "tests/test_packaging.py::test_the_default_dataset_job_runs_on_the_base_install",
    "tests/render/test_render_layers.py::test_bolt_unscrew_base_kept_in_step_equals_the_region_composed_whole",
    "tests/render/test_render_layers.py::test_color_connect_base_kept_in_step_equals_the_board_composed_whole",
    "tests/render/test_render_layers.py::test_incremental_frames_of_a_solved_play_equal_fresh_renders_and_keep_their_deltas",
    "tests/render/test_render_layers.py::test_render_delta_boxes_hold_every_changed_pixel",
    "tests/render/test_render_layers.py::test_render_delta_since_a_suites_own_frame_holds_with_other_suites_between",
    "tests/agents/models/test_resample.py::test_an_episodes_frames_resized_one_after_the_other_are_pillows",
    "tests/agents/models/test_resample.py::test_resizing_is_pillows_bicubic_to_the_bit_whole_and_frame_to_frame",
    "tests/solvers/test_solvers_bolt.py::test_certify_matches_brute_force_on_random_states",
    "tests/solvers/test_solvers_bolt.py::test_mid_game_certificates_on_hard_levels_are_decided",
    "tests/solvers/test_solvers_bolt.py::test_optimal_lengths_match_plain_bfs_on_small_levels",
    "tests/solvers/test_solvers_nut_kernels.py::test_successors_match_the_rules_on_random_states",
    "tests/solvers/test_solvers_table.py::test_batched_search_and_in_place_table_growth_store_the_same_states",
    "tests/solvers/test_solvers_table.py::test_knowledge_successors_match_generic_expansion",
    "tests/agents/test_verify.py::test_every_single_field_tampering_of_a_genuine_run_is_refused",
    # diagnose branch: a model agent's continuations on the paper's screen (about 5 s)
    "tests/agents/diagnose/test_branch.py::test_a_model_agent_continues_the_branches_through_the_shared_agent_options",
    # the D.1 model context through the scripted endpoint: 18 requests of 1280 x 900 screenshots per wire
    "tests/agents/models/test_d1.py::test_a_takeover_then_a_window_of_12_turns_and_4_images_with_a_summary_every_8",
    # diagnose takeover: the checkpoints and the whole filler study (module fixtures, about 7 s), the model agent
    "tests/agents/diagnose/test_takeover.py::test_the_filler_reproduces_the_papers_pattern_with_exact_paired_counts",
    "tests/agents/diagnose/test_takeover.py::test_a_model_agent_takes_over_through_a_real_endpoint",
}


def pytest_collection_modifyitems(config, items):
    import pytest
    for item in items:
        if item.nodeid.split("[")[0] in SLOW:
            item.add_marker(pytest.mark.slow)


CHECKOUT = Path(__file__).resolve().parents[1]
_SKIPPED = {".git", "__pycache__"}


def _checkout_files() -> set[str]:
    """Every file and folder of the checkout (git's own and bytecode caches aside)."""
    found = set()
    for root, dirs, files in os.walk(CHECKOUT):
        dirs[:] = [d for d in dirs if d not in _SKIPPED]
        rel = Path(root).relative_to(CHECKOUT)
        found.update(str(rel / name) for name in dirs + files)
    return found


def pytest_sessionstart(session):
    session.config._checkout_before = _checkout_files()


def pytest_sessionfinish(session, exitstatus):
    """The run fails if a test left anything in the checkout (results/eval-<time>/, .hypothesis/,
    ...): tests write to tmp_path and other temporary folders only."""
    before = getattr(session.config, "_checkout_before", None)
    if before is None:
        return
    left = sorted(_checkout_files() - before)
    if left:
        tr = session.config.pluginmanager.get_plugin("terminalreporter")
        msg = f"tests left files in the checkout {CHECKOUT}: {', '.join(left[:20])}" + (" ..." if len(left) > 20 else "")
        if tr is not None:
            tr.write("\n")
            tr.write_line(f"ERROR: {msg}", red=True)
        session.exitstatus = 1
