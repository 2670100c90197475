"""A campaign store's allocation table (campaign/allocation.py) is read back checked: a value
shapefuzz never writes there (text for a count, a negative or endless number of seconds, a kind it
does not know, a name without a family) is a CorruptStoreError naming the table, the row and the
column, on resume (`check_rows`) and in the report, never a traceback or a weight read from it."""

from __future__ import annotations

import pytest

from shapefuzz.campaign.allocation import Allocation, resume_allocation
from shapefuzz.campaign.database import CampaignStore, CellRecord, CellRow
from shapefuzz.campaign.rows import CorruptStoreError
from shapefuzz.campaign.causes.verdicts import bucket_triage


@pytest.mark.parametrize("sql, column", [
    ("UPDATE allocation SET checks='many'", "column checks: expected an integer"),
    ("UPDATE allocation SET seconds=-1", "column seconds"),
    ("UPDATE allocation SET recent_causes=1e308", "column recent_causes"),
    ("UPDATE allocation SET kind='secret'", "column kind"),
    ("UPDATE allocation SET name='nofamily'", "column name"),
])
def test_garbage_in_the_allocation_table_is_one_line_naming_it(tmp_path, sql, column):
    store = CampaignStore(tmp_path / "camp")
    store.put_cells([CellRow("draw", "conv/bare", CellRecord(3, 2.5, 1.0, 2.5, 1.0, 2, 0))])
    assert store.cells()[0].record.checks == 3
    store.db.execute(sql)
    for read in (store.check_rows, store.cells,
                 lambda: resume_allocation(store, Allocation(("conv",), 0), bucket_triage)):
        with pytest.raises(CorruptStoreError, match=f"table allocation, row .*{column}") as refused:
            read()
        assert "\n" not in str(refused.value)
