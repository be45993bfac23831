from drivebench.cli.main import app

app(prog_name="drivebench")
