#!/usr/bin/env bash
# Prints the -run pattern of shoalpgx's tests that scripts/test.sh runs a
# second time with SHOAL_TEST_PIPELINE set: every test of the files below
# but those whose promise pipelining changes on purpose (an unclosed Rows,
# Row or batch holds its connection: a pipelined one was read whole and
# holds none).
set -euo pipefail
cd "$(dirname "$0")/../shoalpgx"
files=(helpers_test.go pool_test.go tx_test.go prepare_test.go reset_test.go tracer_test.go ping_test.go name_test.go password_test.go mask_test.go)
skip='^(TestQueryHoldsTheConnectionUntilRowsClose|TestQueryRowHoldsTheConnectionUntilScan|TestSendBatchHoldsTheConnectionUntilClose)$'
# and, of other files, the budget's bound at the server, its permits
# coming back only after their backends, the fence's look before a dial
# with a suspect slot, which waits for a connection to look through, and
# SetMaxConns closing what is over the new limit at the server.
extra=(TestBudgetBoundsConnectionsAtTheServer TestPipelineWithBudget TestBudgetPermitComesBackAfterTheBackend
	TestBudgetRefusedDialWaitsForTheBackend TestBudgetCallersCloseWaitsForTheBackend
	TestBudgetFenceLooksBeforeItDials TestBudgetFenceLookWaitsItsTurnOnABusyPool
	TestSetMaxConnsShrinksAtTheServer)
# Left off on purpose: TestAcquireAllIdleAppliesPrepareConn holds MaxConns
# whole connections at once, and the shared ones the pool keeps open take
# part of MaxConns; TestCancelAbandonedStatementsKeepTheirConnections tests
# the cancel request a whole connection sends, and a pipelined statement
# sends none (it runs on, its answer read and dropped).
names=$( (grep -h '^func Test' "${files[@]}" | sed 's/^func \(Test[A-Za-z0-9_]*\).*/\1/' | grep -Ev "$skip"; printf '%s\n' "${extra[@]}") | paste -sd'|')
echo "^($names)\$"
