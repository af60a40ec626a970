/* A main() for CUnit suites that, unlike CU_basic_run_tests alone, exits
 * non-zero when any assertion failed.  Include once, after defining
 * `static const CU_TestInfo suite_tests[]` and SUITE_NAME. */
#ifndef ST_CUNIT_MAIN_H
#define ST_CUNIT_MAIN_H

#include <CUnit/Basic.h>

int main(void)
{
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 2;
    CU_SuiteInfo suites[] = {{SUITE_NAME, NULL, NULL, NULL, NULL, (CU_TestInfo *)suite_tests},
                             CU_SUITE_INFO_NULL};
    if (CU_register_suites(suites) != CUE_SUCCESS)
        return 2;
    CU_basic_set_mode(CU_BRM_VERBOSE);
    CU_basic_run_tests();
    unsigned failed = CU_get_number_of_failures() + CU_get_number_of_tests_failed();
    CU_cleanup_registry();
    return failed ? 1 : 0;
}

#endif
