"""fio as the IO engine: job files, the child process, and robust parsing of its output."""
