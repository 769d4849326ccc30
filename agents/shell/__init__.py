"""The shell: the loop and its runners, which perform the machine's effects."""
