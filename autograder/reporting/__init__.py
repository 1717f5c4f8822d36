"""What comes out of grading: grades CSV and LMS exports, feedback pages, class report, leaderboard."""
