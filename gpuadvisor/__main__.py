from gpuadvisor.launch import run

run()
