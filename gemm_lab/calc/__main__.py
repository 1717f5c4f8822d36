from gemm_lab.calc.examples import main

main()
