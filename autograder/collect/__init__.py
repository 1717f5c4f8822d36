"""Import hand-ins from an LMS download (zip or folder) into autograder/submitted/."""
